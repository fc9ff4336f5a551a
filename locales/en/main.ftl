## Shared by every page, the error pages and the command line.

nav-label = Administration
nav-dashboard = Dashboard
nav-workflows = Workflows
nav-instances = Instances
nav-settings = Settings
nav-status = Status report
nav-logout = Sign out
language-switcher = Language

action-edit = Edit
action-save = Save
form-has-errors = Some fields need your attention; nothing was saved.

field-required = This field is required.
field-required-mark = required
field-email = Enter an email address such as name@example.org.
field-number = Enter a number, such as 12 or 4.5.
field-too-long = This is too long: at most { $max } characters.
field-admin-name = Name
field-password = Password
field-password-confirm = Password again

error-not-found-title = Page not found
error-not-found = There is nothing at this address.
error-forbidden-title = Not allowed
error-forbidden = This form could not be accepted. Go back, reload the page and send it again.
error-bad-request-title = Request not understood
error-bad-request = The request could not be read. Go back and try again.
error-internal-title = Something went wrong
error-internal = The site could not answer this request. Please try again in a moment.

severity-ok = OK
severity-note = Note
severity-warning = Warning
severity-error = Error

state-active = In progress
state-complete = Complete
state-rejected = Rejected

cli-usage =
    Orchestra: workflows answered through signed links.

    Usage: orchestra COMMAND

    Commands:
      serve [--bind ADDR]                                  run the web server (default 127.0.0.1:8080)
      init                                                 create the database (a SQLite file) if missing, and migrate it
      admin create NAME                                    create an administrator (password from ORCHESTRA_ADMIN_PASSWORD or standard input)
      workflow list                                        list workflows: id, name, label, steps
      instance start WORKFLOW [--subject TITLE] [--body TEXT]   start an instance; prints its id
      link issue INSTANCE [--participant NAME] [--ttl DURATION] issue a link; prints its URL (DURATION: 3600, 30m, 12h, 7d)
      config get KEY | config set KEY VALUE | config list  read and change settings
      status [--format text|json]                          the status report; exits 0 OK, 1 warning, 2 error
      cron                                                 periodic maintenance
      keys rotate                                          new site keys: every outstanding link stops working

    Environment: ORCHESTRA_DATABASE_URL (default sqlite:orchestra.db), ORCHESTRA_FLOOD (sql or memory),
    ORCHESTRA_LOG, ORCHESTRA_LANG, ORCHESTRA_TRUSTED_PROXIES.
cli-unknown = Unknown command: { $command }. Run "orchestra help" for the list.
cli-unknown-option = Unknown option: { $option }
cli-option-value = The option { $option } needs a value.
cli-bad-address = Not an address to listen on: { $address } (for example 127.0.0.1:8080).
cli-bad-format = Unknown format: { $format } (text or json).
cli-failed = Failed: { $error }
cli-setup-url =
    No administrator exists yet. Open this one-time setup URL to create the first one (valid for 24 hours):
      { $url }
cli-serving = Orchestra is listening on { $address } (database: { $backend }, flood store: { $flood }).
cli-doorway-uncapped = Warning: nothing caps the interaction doorway. Set the request limits under Settings (see docs/interaction.md).
cli-password-stdin = Could not read the password from standard input.
cli-admin-created = Administrator { $name } created.
cli-admin-exists = An administrator named { $name } already exists.
cli-workflow-unknown = No workflow named { $workflow }. "orchestra workflow list" shows them.
cli-keys-rotated = New site keys are in place. Every link and handle issued before now no longer works.

config-unknown-key = Unknown setting: { $key }. "orchestra config list" shows them.
config-saved = { $key } is now { $value }.
config-refused = { $key }: { $reason }
setting-site-name = Enter a site name of 1 to 100 characters.
setting-base-url = Enter a web address starting with http:// or https://, such as https://flows.example.org.
setting-boolean = Enter true or false.
setting-on-store-fault = Enter count, allow or refuse.
setting-not-a-number = Enter a whole number from { $min } to { $max }.
setting-out-of-range = Enter a whole number from { $min } to { $max }.
config-env-flood = ORCHESTRA_FLOOD must be "sql" or "memory", not "{ $value }".
config-env-number = { $name } must be a whole number from { $min } to { $max }, not "{ $value }".

# Issue 9
error-login-limited-title = Too many sign-in attempts
error-login-limited = There have been too many sign-in attempts from this address or for this account. Wait a while, then try again.
error-busy-title = Busy
error-busy = The site is busy checking other sign-ins. Try again in a moment.
error-unavailable-title = Not available
error-unavailable = The site cannot save anything right now. The administrator has been told; please try again later.
config-env-database-scheme = ORCHESTRA_DATABASE_URL must be a SQLite path or one of { $schemes }, not "{ $value }".
config-env-trusted-proxies = ORCHESTRA_TRUSTED_PROXIES must list addresses or CIDR ranges (such as 127.0.0.1, 10.0.0.0/8), separated by commas; "{ $value }" is not one.
db-missing = There is no database at { $path }. Run "orchestra init" to create one, or check ORCHESTRA_DATABASE_URL.
db-refused = The database server refused the connection: is it running, on that host and port?
db-unknown-host = The database server's host name is unknown.
db-authentication = The database server refused the user name or password.
db-no-such-database = The database named in ORCHESTRA_DATABASE_URL does not exist on that server.
db-not-a-database = That is not a database Orchestra can use (not a SQLite file, or not a PostgreSQL server).
db-timed-out = The database did not answer within { $seconds } seconds.
db-other = The database could not be opened: { $error }
cli-init-done = The database is ready.
