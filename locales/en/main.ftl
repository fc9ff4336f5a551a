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
state-cancelled = Cancelled

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
cli-metrics-serving = Metrics for Prometheus on { $address }/metrics (keep this address private).
cli-doorway-uncapped = Warning: nothing caps the interaction doorway. Set the request limits under Settings (see docs/interaction.md).
cli-connections = Connections: at most { $connections } at once, { $per_address } from one address; { $descriptors } file descriptors (hard limit { $hard }).
cli-descriptors-low = Warning: { $descriptors } file descriptors hold only { $connections } connections, fewer than ORCHESTRA_MAX_CONNECTIONS ({ $wanted }). Raise the limit (LimitNOFILE= under systemd; see docs/operations.md).
cli-password-stdin = Could not read the password from standard input.
cli-admin-created = Administrator { $name } created.
cli-admin-exists = An administrator named { $name } already exists.
cli-workflow-unknown = No workflow named { $workflow }. "orchestra workflow list" shows them.
cli-workflow-created = Workflow { $workflow } created, version 1.
cli-workflow-saved = Workflow { $workflow } saved: version { $version }.
cli-workflow-unchanged = Workflow { $workflow } saved: the definition is the newest version's, so no new version.
cli-workflow-name-taken = A workflow named { $workflow } exists already. "orchestra workflow save { $workflow }" saves a new version of it.
cli-workflow-label-required = A new workflow needs its label: --label "Expense claim".
cli-workflow-label-in-invalid = --label-in takes LANGUAGE=LABEL, the language one of: { $languages } (not "{ $given }").
cli-workflow-file-unreadable = Could not read the definition from { $file }: { $error }
cli-workflow-file-too-large = The definition in { $file } is over 1 MiB; a definition holds at most 20,000 characters.
cli-keys-rotated = New site keys are in place. Every link and handle issued before now no longer works, and every administrator signs in again. API tokens and webhook endpoints keep working.
cli-keys-rotate-voids = Rotating the site keys voids every link and continuation handle issued so far and every administrator's session. API tokens keep working (orchestra token rotate-key voids them).
cli-confirm-with-yes = Nothing was changed. Run `orchestra { $command }` to go on.
cli-about-contact = Participants' addresses: contact erase
cli-about-contact-erase = Removes an address from every row that holds it, now, whatever the instance's state (asks first unless --yes)
cli-arg-contact-email = The address to erase (compared without case)
cli-contact-erase-voids = Erasing an address removes it from every contact, email record and text that holds it, in every instance, running or ended; a running instance's participant with this address gets no more email. This cannot be undone.
cli-contact-erase-invalid = That is not an email address; nothing was changed.
cli-contact-erased = { $rows } rows changed: { $contacts } contacts removed, { $mails } email records cleared, { $texts } texts where the address was.
cli-confirm-ask = Type yes to go on:{" "}
cli-confirm-kept = Nothing was changed.
cli-token-rotate-voids = Rotating the API tokens' key voids every API token made so far; links, sessions and the site keys are left alone.
cli-token-key-rotated = A new key for API tokens is in place. Every token made before now no longer works: make new ones (orchestra token create).
cli-about-token-rotate-key = New key for API tokens: every token stops working (asks first unless --yes)
cli-arg-yes = Rotate without asking

config-unknown-key = Unknown setting: { $key }. "orchestra config list" shows them.
config-saved = { $key } is now { $value }.
config-refused = { $key }: { $reason }
setting-site-name = Enter a site name of 1 to 100 characters.
setting-base-url = Enter a web address starting with http:// or https://, such as https://flows.example.org.
setting-boolean = Enter true or false.
setting-on-store-fault = Enter count, allow or refuse.
setting-not-a-number = Enter a whole number from { $min } to { $max }.
setting-out-of-range = Enter a whole number from { $min } to { $max }.
setting-duration = Enter a duration from { $min } to { $max } seconds: 3600, 30m, 12h or 7d.
config-env-flood = ORCHESTRA_FLOOD must be "sql" or "memory", not "{ $value }".
config-env-number = { $name } must be a whole number from { $min } to { $max }, not "{ $value }".

# Issue 9
error-login-limited-title = Too many sign-in attempts
error-login-limited = There have been too many sign-in attempts from this address or for this account. Wait a while, then try again.
error-busy-title = Busy
error-busy = The site is busy checking other sign-ins. Try again in a moment.
error-unavailable-title = Not available
error-unavailable = The site cannot save anything right now. The administrator has been told; please try again later.
error-too-large-title = Too large
error-too-large = What you sent is larger than this page takes. Go back, shorten it and try again.
error-timed-out-title = Too slow
error-timed-out = What you sent took too long to arrive. Go back and try again.
error-crowded-title = Busy
error-crowded = The site is answering as many requests as it can right now. Try again in a moment.
config-env-database-scheme = ORCHESTRA_DATABASE_URL must be a SQLite path or one of { $schemes }, not "{ $value }".
config-env-trusted-proxies = ORCHESTRA_TRUSTED_PROXIES must list addresses or CIDR ranges (such as 127.0.0.1, 10.0.0.0/8), separated by commas; "{ $value }" is not one.
config-env-client-ip-header = ORCHESTRA_CLIENT_IP_HEADER must be "x-forwarded-for", "x-real-ip" or "forwarded": the one header your proxy sets; not "{ $value }".
config-env-client-ip-header-alone = ORCHESTRA_CLIENT_IP_HEADER is "{ $value }", but ORCHESTRA_TRUSTED_PROXIES names no proxy, so no header would be read. Name the proxy, or unset the header.
config-env-metrics-bind = ORCHESTRA_METRICS_BIND must be an address and port to serve the metrics on, such as 127.0.0.1:9464, not "{ $value }".
db-missing = There is no database at { $path }. Run "orchestra init" to create one, or check ORCHESTRA_DATABASE_URL.
db-refused = The database server refused the connection: is it running, on that host and port?
db-unknown-host = The database server's host name is unknown.
db-authentication = The database server refused the user name or password.
db-no-such-database = The database named in ORCHESTRA_DATABASE_URL does not exist on that server.
db-not-a-database = That is not a database Orchestra can use (not a SQLite file, or not a PostgreSQL server).
db-timed-out = The database did not answer within { $seconds ->
        [one] { $seconds } second
       *[other] { $seconds } seconds
    }.
db-not-migrated = The database has not been set up by this version of Orchestra (migrations missing). Run "orchestra init" to apply them.
db-other = The database could not be opened: { $error }
cli-init-done = The database is ready.

# Issue 12: the integrator API
api-not-found = There is no such resource.
api-internal = Something went wrong on our side.
api-bad-text = The request holds text that cannot be stored.
api-unauthorized = A valid API token is needed: send it as Authorization: Bearer <token>.
api-too-many-failures = Too many requests from this address with a token this site does not know. Wait before trying again (Retry-After says how long).
api-bad-signature = The request signature is not valid: an unknown key, a changed request, a timestamp more than 5 minutes away, or a signature already used.
api-bad-json = The body is not the JSON this call takes.
api-field-type = This field does not have the type this call takes (see /api/v1/openapi.json).
api-method-not-allowed = This resource does not take this method; the Allow header lists those it takes.
api-body-too-large = The body is larger than this call takes.
api-unsupported-media-type = The body must be JSON, sent with Content-Type: application/json.
api-idempotency-key-invalid = An Idempotency-Key is 1 to 255 visible ASCII characters (no spaces).
api-idempotency-key-reused = This Idempotency-Key was used for another request; use a new key for a new request.
api-idempotency-key-in-progress = The first request with this Idempotency-Key is still at work; try again in a moment.
api-body-timed-out = The body did not arrive in time.
api-busy = The server is answering as many requests as it can; try again in a moment.
api-nul = Text may not hold a NUL character (\u0000).
api-workflow-missing = Name the workflow by its machine name.
api-workflow-name-taken = A workflow has this name already; save a new version of it with PUT /api/v1/workflows/{"{"}name{"}"}.
api-participant-missing = Name the participant to hand over, as the workflow names them.
api-running-cap = This token has { $cap } running instances already, its cap. Let some end first.
api-email-rate-address = This address has been sent { $cap } link emails through the API this hour, as many as it may: try again next hour.
api-email-rate-token = This token has asked for { $cap } link emails this hour, as many as it may: try again next hour.
api-link-cap = This instance has had { $cap ->
        [one] { $cap } link
       *[other] { $cap } links
    } issued in the last 24 hours, its cap.
skip-to-content = Skip to the content
breadcrumbs-label = You are here
crumb-workflow = Workflow #{ $id }
crumb-instance = Instance #{ $id }
language-switch-held = This form holds what you typed: send it, or reload the page, before you switch language.
copy-button = Copy
copy-done = The link is copied.
copy-failed = Copying failed: select the link and copy it yourself.
signed-out = You are signed out.
config-env-log = ORCHESTRA_LOG must be a tracing filter such as "info" or "orchestra=debug,sqlx=warn", not "{ $value }" ({ $error }).
cli-base-url-elsewhere = Warning: the base URL { $base_url } is not where this server listens ({ $address }): links issued now lead there. Change it with: orchestra config set orchestra.base_url URL.
cli-about = Orchestra: workflows answered through signed links.
cli-after-help = Run "orchestra COMMAND --help" for a command's own options. Environment: ORCHESTRA_DATABASE_URL (default sqlite:orchestra.db), ORCHESTRA_FLOOD (sql or memory), ORCHESTRA_LOG, ORCHESTRA_LANG, ORCHESTRA_TRUSTED_PROXIES.
cli-heading-usage = Usage:
cli-heading-commands = Commands
cli-heading-options = Options
cli-value-command = COMMAND
cli-help-flag = Show this help
cli-version-flag = Show the version
cli-about-serve = Run the web server
cli-arg-bind = The address to listen on (default 127.0.0.1:8080)
cli-about-init = Create the database (a SQLite file) if missing, and migrate it
cli-about-admin = Administrators: admin list, create, password, reset, disable, enable, remove, unlock
cli-about-admin-create = Create an administrator (password from ORCHESTRA_ADMIN_PASSWORD, else asked at a terminal, else one line of standard input)
cli-arg-admin-name = The administrator's name
cli-about-workflow = Workflows: workflow list
cli-about-workflow-list = List workflows: id, name, label, steps
cli-about-workflow-create = Create a workflow from a definition read from --file or standard input
cli-about-workflow-save = Save a workflow's definition from --file or standard input (a new version when it changed)
cli-about-workflow-show = Print a workflow's newest definition, as save reads it back
cli-about-instance-reassign = Hand a participant of a running instance to a new contact: their old links stop working and the new contact is emailed
cli-arg-reassign-participant = The participant to hand over (as the workflow names them)
cli-reassign-contact = Give the new contact as --contact { $participant }=EMAIL (with --contact-name and --contact-lang if you wish).
cli-instance-reassigned = Instance { $id }: { $participant } handed to the new contact. Their old links no longer work; the new contact is emailed when the step is theirs.
cli-about-instance = Instances: instance start WORKFLOW, instance cancel INSTANCE
cli-about-instance-start = Start an instance; prints its id
cli-about-instance-show = Show an instance: its workflow, state, step, who it waits for, the participants' addresses and its history
cli-instance-show-title = Instance { $id }: { $title }
cli-instance-show-workflow = Workflow: { $label } ({ $name }), version { $version }
cli-instance-show-state = State: { $state }
cli-instance-show-step = Step { $number } of { $steps }: { $title }
cli-instance-show-waiting = Waiting for: { $participants }
cli-instance-show-contact = Contact: { $participant } <{ $email }> ({ $lang })
cli-instance-show-history = History ({ $shown } of { $total }, oldest first):
cli-about-instance-cancel = Cancel a running instance: its links stop working, a payment under way is closed
cli-arg-reason = Why, kept in the instance's history (at most 500 characters)
cli-instance-cancelled = Instance { $id } cancelled.
cli-arg-workflow = The workflow's name or id
cli-arg-workflow-name = The workflow's machine name: lower-case letters, digits and _
cli-arg-workflow-label = The workflow's label, as people see it
cli-arg-workflow-label-keep = A new label (the workflow keeps its own when left out)
cli-arg-workflow-label-in = The label in another language (fr=…), repeatable; an empty one removes it
cli-arg-workflow-file = The file holding the definition (standard input when left out)
cli-arg-subject = The subject's title (default: the workflow's label)
cli-arg-body = The subject's text
cli-about-link = Links: link issue INSTANCE --participant NAME
cli-about-link-issue = Issue a link; prints its URL
cli-arg-instance = The instance's id
cli-arg-participant = Who the link is for (--branch is the same option)
cli-arg-ttl = How long the link works: 3600, 30m, 12h, 7d
cli-about-config = Settings: config get KEY, config set KEY VALUE…, config list
cli-about-config-get = Print one setting
cli-about-config-set = Change settings; several pairs are saved together or not at all
cli-about-config-list = Print every setting
cli-arg-key = The setting's key (see config list)
cli-arg-pairs = A key and its value, as many pairs as you like
cli-about-status = The status report; exits 0 OK, 1 warning, 2 error
cli-arg-format = text or json
cli-about-cron = Periodic maintenance
cli-about-keys = Site keys: keys rotate
cli-about-keys-rotate = New site keys: every link and handle stops working, every administrator is signed out (asks first unless --yes)
cli-about-completions = Print a shell completion script (bash, zsh, fish, elvish, powershell)
cli-arg-shell = The shell
cli-about-help = Show this help
cli-about-version = Show the version
cli-missing-argument = Missing { $argument }. Run the command with --help to see how it is used.
cli-repeated-option = The option { $option } is given more than once.
cli-config-pairs = Give each setting as a KEY VALUE pair.
cli-bad-shell = Unknown shell: { $shell } (bash, zsh, fish, elvish or powershell).
cli-heading-arguments = Arguments
cli-about-token = API tokens: token create NAME, token list, token scope NAME, token revoke NAME, token rotate-key
cli-about-token-create = Create an API token; prints it once
cli-arg-token-name = The token's name (lower-case letters, digits, - and _)
cli-arg-token-rate = Requests refilled per minute (default: the site's)
cli-arg-token-burst = The most requests at once (default: the site's)
cli-about-token-list = List API tokens: name, rate, burst, last use, state, abilities, reach, workflows
cli-about-token-revoke = Revoke an API token
cli-about-integrator-key = Integrator signing keys: integrator-key create NAME
cli-about-integrator-key-create = Make (or replace) an integrator's signing key; prints the key id and the secret once
cli-arg-integrator-name = The integrator's name
cli-token-number = { $option } takes a whole number from 1 to 1000000, not "{ $value }".
cli-token-created = Token { $name } created: it is printed above, this once.
cli-token-revoked = Token { $name } revoked.
cli-token-unknown = No live token named { $name }.

# Issue 18: API token scopes
api-forbidden-scope = This token's scope does not include { $ability }. An administrator can widen it (docs/api.md).
api-forbidden-workflow = This token's scope does not include the workflow { $workflow }.
cli-arg-token-abilities = What the token may do, comma-separated: read, start, links, workflows (default: read, start, links)
cli-arg-token-reach = Which instances: own (those it started, the default) or all
cli-arg-token-workflows = Which workflows, comma-separated machine names (default: * for every workflow)
cli-about-token-scope = Change a token's scope: the options given replace those parts, the others stay
cli-token-scope = Token { $name }: abilities { $abilities }, reach { $reach }, workflows { $workflows }.
field-choice = Choose one of the options.
api-bad-cursor = This cursor was not given by this API: pass back a next_cursor (or history_cursor) as it came, or leave it out for the newest page.
api-bad-limit = Give a whole number from 1 to { $max }.
api-bad-state = Give one of active, complete, rejected or cancelled.
cli-about-instance-list = List instances, newest first, a page at a time
cli-arg-list-workflow = Only this workflow's instances (its machine name or id)
cli-arg-list-state = Only instances in this state: active, complete, rejected or cancelled
cli-arg-list-search = Only instances whose subject title holds this text, in any case
cli-arg-list-limit = How many a page shows, 1 to 200 (50 unless given)
cli-arg-list-before = Start below this instance id (the next page's command gives it)
cli-arg-list-format = text (the default) or csv: every instance the filters hold, with who each waits on and since when
cli-about-instance-evidence = Print an instance's evidence record: every step, answer (with its SHA-256), link, email and file, and the record's own SHA-256
cli-arg-evidence-format = json (the default, as the API gives it) or html (a printable document)
cli-state-unknown = No state named { $state }: give active, complete, rejected or cancelled.
cli-limit-invalid = Give --limit a whole number from 1 to { $max }.
cli-before-invalid = Give --before an instance id, a whole number above 0.
cli-list-state = state
cli-list-workflow = workflow
cli-list-started-by = started by
cli-list-updated = last change
cli-list-title = subject
cli-list-next = Next page: { $command }
config-env-files-dir = ORCHESTRA_FILES_DIR must name an existing directory; "{ $value }" is not one.

# A form's typed fields (src/domain/workflow/values.rs)
field-number-ambiguous = “{ $typed }” reads two ways: write { $whole } or { $decimal }.
field-number-digits = Enter a number of at most { $max } digits.
field-number-range = Enter a number from { $min } to { $max }.
field-date = Enter a date, such as 12/31/2027.
field-date-impossible = { $typed } is not a day of the calendar: check the day and the month.
field-date-placeholder = MM/DD/YYYY
field-url = Enter a web address starting with https:// or http://, such as https://example.org.
field-checkbox-required = Tick this box to go on.
field-checkbox-yes = Yes
field-checkbox-no = No
date-long = { $month } { $day }, { $year }
month-1 = January
month-2 = February
month-3 = March
month-4 = April
month-5 = May
month-6 = June
month-7 = July
month-8 = August
month-9 = September
month-10 = October
month-11 = November
month-12 = December
cli-arg-keys-resend = Also queue a fresh link email to every participant a running instance waits on
cli-about-keys-resend = Queue a fresh link email to every participant a running instance waits on (after a rotation)
cli-keys-without-link = { $count ->
    [one] 1 running instance has no working link left. Send fresh links with: orchestra keys resend
   *[other] { $count } running instances have no working link left. Send fresh links with: orchestra keys resend
  }
cli-keys-resent = { $emails ->
    [one] 1 fresh link email queued
   *[other] { $emails } fresh link emails queued
  } over { $instances ->
    [one] 1 running instance.
   *[other] { $instances } running instances.
  }

## orchestra receipt verify (cli::receipts)
cli-about-receipt = Receipts given to participants: receipt verify
cli-about-receipt-verify = Check a receipt's signature against this site's keys and print what it says (exit 0: valid, 1: not)
cli-arg-receipt-file = The receipt file (a compact JWS), or - for standard input
cli-receipt-unreadable = Cannot read { $file }.
cli-receipt-malformed = Not a valid receipt: this is not a compact JWS (three base64url parts of JSON).
cli-receipt-algorithm = Not a valid receipt: it is not signed with EdDSA.
cli-receipt-unknown-key = Not a valid receipt: it is signed with a key this site never published (another site's, or forged).
cli-receipt-signature = Not a valid receipt: the signature does not match, so it was changed after it was signed.
cli-receipt-claims = Not a valid receipt: the signature is good but what it holds is not a receipt.
cli-receipt-valid = Valid receipt, signed by this site (key { $kid }).
cli-receipt-line = { $label }: { $value }
cli-receipt-id = Receipt
cli-receipt-issuer = Site
cli-receipt-issued = Issued
cli-receipt-instance = Instance
cli-receipt-step = Step
cli-receipt-round = Round
cli-receipt-participant = Participant
cli-receipt-answered = Answered
cli-receipt-link = Link record
cli-receipt-link-none = none
cli-receipt-sha256 = Answer's SHA-256
cli-receipt-fields = Fields
cli-receipt-file = file { $name }, SHA-256 { $sha256 }
cli-receipt-matches = The instance's history still holds this answer, with the same SHA-256.
cli-receipt-erased = The answer's words were erased from the history; the SHA-256 kept there is this receipt's.
cli-receipt-differs = The instance's history holds a different SHA-256 for this answer.
cli-receipt-absent = The history holds no such receipt (its instance may have been deleted).
config-env-oidc-partial = OpenID Connect sign-in needs ORCHESTRA_OIDC_ISSUER, ORCHESTRA_OIDC_CLIENT_ID and ORCHESTRA_OIDC_CLIENT_SECRET together; missing: { $names }.
config-env-oidc-issuer = ORCHESTRA_OIDC_ISSUER must be the provider's https address (the issuer, e.g. https://accounts.google.com); "{ $value }" is not one.
