## Administration pages.

login-title = Sign in
login-submit = Sign in
login-failed = Unknown name or wrong password.

setup-title = Create the first administrator
setup-intro = This one-time page creates the site's first administrator. Choose a name and a password of at least 10 characters.
setup-submit = Create and sign in
setup-done = Welcome. You are signed in as the site's first administrator.
admin-name-invalid = Use 1 to 60 letters, digits, dots, dashes, underscores or @.
admin-password-short = Use at least { $min } characters.
admin-password-long = This password is too long.
admin-password-mismatch = The two passwords differ.

dashboard-title = Dashboard
dashboard-attention = Needs attention
dashboard-site-state = The site
dashboard-see-status = See the status report
dashboard-start = Get started
dashboard-workflow-count = Workflows:
dashboard-recent = Recent instances
dashboard-no-instances = No instance has been started yet.
first-steps-title = Getting started
first-steps-intro = A few steps to make this site ready for the people you work with. Take them in order; each one links to the page where it is done.
first-steps-report = See the full status report
first-step-done = Done
first-step-todo = To do
first-step-site = Set the site's address and name
first-step-site-help = The address is the one people will open from their emails, for example https://forms.example.org.
first-step-mail = Set an email server
first-step-mail-help = So that people get their links by email. Whoever runs the server sets it when starting it (see the operations guide).
first-step-workflow = Look at a workflow, or change one
first-step-workflow-help = A workflow is the list of steps a request goes through and who answers each one. The examples show how they work.
first-step-instance = Start a first instance
first-step-instance-help = An instance is one request going through a workflow, such as one order or one contract.
first-step-admin = Invite another administrator
first-step-admin-help = Someone who can step in when you are away.

workflows-title = Workflows
workflow-new = New workflow
workflow-edit = Edit workflow
workflow-label = Label
workflow-name = Machine name
workflow-name-help = Lowercase letters, digits and underscores; used by the command line. It cannot change later.
workflow-steps = Steps
workflow-definition = Steps, one per line
workflow-preview = Preview
workflow-preview-help = Each step as its participant will see it, from the definition as typed above. Nothing is saved until you press Save.
workflow-definition-help = Each line is a step: its kind, optional parallel branches in brackets, a colon, its title, then details after a bar.
kind-form-help = a form the outside party fills; * marks a required field; the field types are { $types }
kind-review-help = approve or reject with a comment; here two reviewers answer in parallel
kind-payment-help = the payer goes to the payment provider and comes back
kind-form = Form
kind-review = Review
kind-payment = Payment
workflow-saved = The workflow was saved.
workflow-name-invalid = Use 1 to 64 lowercase letters, digits or underscores.
workflow-name-taken = Another workflow already has this machine name.
workflow-label-invalid = Enter a label of 1 to 100 characters.
workflow-label-in-en = Label in English
workflow-label-in-fr = Label in French
workflow-label-in-help = Optional: what people reading this language see; the label above otherwise.
workflow-label-other-invalid = Enter at most 100 characters, on one line (or leave it empty).
definition-no-colon = Line { $line }: put a colon after the kind, as in "review: Check the order".
definition-branches = Line { $line }: close the branch list with ], as in review[legal,finance].
definition-branch-name = Line { $line }: branch names use lowercase letters, digits and underscores (at most 32).
definition-branch-twice = Line { $line }: a branch is named twice.
definition-title = Line { $line }: give the step a title of at most 200 characters.
definition-kind = Line { $line }: unknown kind; use form, review or payment.
definition-amount = Line { $line }: write the amount and currency after a bar, as in "| 49.90 EUR".
definition-field = Line { $line }: the field “{ $field }” is malformed; write it as Label, Label* or Label* (email).
definition-field-kind = Line { $line }: the field “{ $field }” has the type “{ $kind }”, which is none; use { $allowed }.
definition-field-twice = Line { $line }: the field “{ $field }” is named twice; give each field of a form its own label.
definition-no-fields = Line { $line }: a form needs at least one field after a bar.
definition-empty = Write at least one step.
definition-too-long = A workflow has at most { $max } steps.

instances-title = Instances
instance-new = Start an instance
instance-start = Start
instance-started = The instance was started. Issue a link below to send it to someone.
instance-subject = Subject
instance-subject-title = Subject title
instance-subject-body = Subject text (the document to review, the order to pay…)
instance-workflow = Workflow
instance-state = State
instance-erased = Erased on { $at }: the answers, files and contacts are no longer kept; the steps, times and answer hashes are.
instance-updated = Last change
instance-current-step = Current step
instance-title-invalid = Enter a title of 1 to { $max } characters.
instance-workflow-unknown = Choose a workflow.
instance-links = Links
instance-branch = Branch
instance-no-branch = (no branch)
instance-ttl = Lifetime
instance-ttl-help = In seconds, or with a unit: 30m, 12h, 7d.
instance-issue = Issue a link
instance-link-issued = Copy this link and send it to the person who should answer. It is shown only once.
instance-link-issued-help = Anyone holding this link can answer the step, until it expires or you revoke the links.
instance-revoke = Revoke all links
instance-revoke-help = Every link and handle issued for this instance stops working at once.
instance-revoked = Every link of this instance was revoked.
instance-cancel = Cancel this instance
instance-cancel-help = Ends it now: every link and payment return stops working, a payment under way is closed, and nothing more can be answered.
instance-cancelled = The instance was cancelled.
handover-title = Hand over
handover-help = Give a participant who still has something to answer to someone else: their old links stop working at once, and the new contact is emailed their link when the step is theirs.
handover-submit = Hand over
instance-handed-over = The participant was handed to the new contact. Their old links no longer work.
instance-cancel-title = Cancel #{ $id } { $title }?
instance-cancel-explain = The instance ends now, as cancelled, and cannot be resumed. Every link and payment return issued for it stops working at once; a payment under way is closed, and a later notice from the provider changes nothing. The history keeps who cancelled it and why.
instance-cancel-reason = Reason (optional; kept in the history)
instance-cancel-ended = This instance has already ended; there is nothing to cancel.
instance-cancel-reason-long = The reason is at most { $max } characters.
history-reason = Reason
history-erased = Erased (retention or an erasure request): the words are no longer kept; the answer's hash is.
history-to = Handed to
# The colon after a label ("Decision: Approved"); French puts a narrow no-break space before it.
label-colon = :
instance-cancel-keep = Keep it running
instance-cancel-back = Back to the instance
instance-files = Files
instance-file-name = File
instance-file-size = Size
instance-file-kind = Kind
instance-history = History
history-when = When
history-step = Step
history-branch = Branch
history-event = Event
history-answer = Answer
event-started = Started
event-answered = Answered
event-link-issued = Link issued
event-links-revoked = Links revoked
event-complete = Completed
event-rejected = Rejected
event-cancelled = Cancelled
link-instance-unknown = No instance { $id }.
link-branch-unknown = This workflow has no branch named { $branch }.
link-ttl-invalid = Enter a lifetime from { $min } seconds to { $max } seconds (for example 3600, 30m, 12h or 7d).

settings-title = Orchestra settings
settings-site-name = Site name
settings-base-url = Base URL
settings-base-url-help = The address people reach this site on; every link is built on it.
settings-link-ttl = Default link lifetime (seconds)
settings-link-ttl-help = From 60 seconds to a year, in seconds or as 30m, 12h, 7d. 604800 (7d) is a week.
settings-retention-days = Keep ended instances' answers (days)
settings-retention-days-help = Days after an instance ends before cron erases its answers, files and contacts (its steps, times and answer hashes stay). 0 keeps them forever. A workflow's keep: line overrides it.
settings-request-limits = Request limits
settings-request-limits-help = Caps how many requests public addresses such as the interaction doorway answer in a rolling period. The limits themselves are set per address.
settings-limits-enabled = Count and limit requests
settings-limits-period = Period (seconds)
settings-limits-period-help = The rolling window every limit is counted over, from 1 second to 604800 (a week). 3600 is an hour.
settings-interaction-link = Set the interaction doorway's limits
settings-saved = The settings were saved.
limits-state-counting = The doorway's requests are being counted and limited.
limits-state-not-counting = Nothing caps the interaction doorway: the switch is on, but both limits are 0.
interaction-title = Interaction settings
interaction-intro = Limits on the interaction doorway, the address that answers capability links without knowing who is calling. Every request is counted before any work is done, good link or not.
interaction-per-link = Requests per link
interaction-per-link-help = How many requests one link or continuation handle may make in a period. Leave room for a person reloading and for a payment provider's return trips. 0 turns this limit off.
interaction-total = Requests in total
interaction-total-help = How many requests all links together may make in a period. Set it well above a busy day: once reached, the doorway refuses everyone until the period rolls on. 0 turns this limit off.
interaction-period-note = Period in seconds, set in the Request limits section:
interaction-switch-off = The request limits switch is off, so these numbers are kept but nothing is counted.
interaction-switch-link = Turn it on in the Request limits section.

status-title = Status report
status-check = Check
status-value = Value
status-severity = Severity
status-database = Database
status-database-ok = { $backend }, reachable
status-database-down = { $backend }, not reachable
status-keys = Site keys
status-keys-present = Present, made { $date }
status-keys-missing = Missing
status-keys-missing-description = Links cannot be signed or checked. Restart the server to create the keys.
status-cron = Last cron run
status-cron-ran = { $date }
status-cron-never = Never
status-retention = Retention of ended instances' records
status-retention-forever = Kept forever (records.retention_days is 0)
status-retention-days = Erased { $days ->
    [one] { $days } day
   *[other] { $days } days
  } after an instance ends
status-retention-description = { $workflows ->
    [none] No workflow has a keep: line of its own.
   *[other] Workflows with a keep: line of their own (days, 0 for forever): { $workflows }.
  }
  { $ran ->
    [yes] Cron's last erasure erased { $count ->
        [one] { $count } instance
       *[other] { $count } instances
    } on { $date }
   *[no] Cron has not run the erasure yet.
  }
status-cron-stale-description = Cron removes expired sessions, handles and counts. The server runs it every ten minutes; without a server running, schedule "orchestra cron".
status-version = Version
status-version-value = Orchestra { $version }
status-doorway = Interaction doorway request limits
status-doorway-on = { $per_link ->
    [0] no per-link limit
   *[other] { $per_link } per link
  }, { $total ->
    [0] no total limit
   *[other] { $total } in total
  }, per { $period ->
        [one] { $period } second
       *[other] { $period } seconds
    } (flood store: { $backend })
status-doorway-on-description = Every request to the doorway is counted before any work; a refused request gets a plain 429.
status-doorway-off-switch = Nothing caps the doorway: the request limits switch is off.
status-doorway-off-switch-description = Anyone can make the site check links as fast as they can send requests. Turn on "Count and limit requests" in Settings › Request limits and set both limits in Interaction settings, or run: { $fix }
status-doorway-off-zero = Nothing caps the doorway: both limits are 0.
status-doorway-off-zero-description = The switch is on, but a limit of 0 turns its tier off. Set requests per link and in total in Interaction settings, or run: { $fix }

status-line = [{ $severity }] { $title }: { $value }

# Issue 8: versions, participants, link records
action-cancel = Cancel
workflow-open = Open the workflow { $label }
workflow-current-version = Current version
workflow-participants = Participants
workflow-participants-help = Write @name after the kind to say who answers a step (form@supplier). Steps that name nobody go to the participant "default". Parallel branches [legal,finance] are participants of one step.
workflow-options-help = Options follow the step on its line, each after a bar; the whole list is in docs/workflows.md.
workflow-requests = A participant's link of this workflow makes up to { $requests ->
    [one] { $requests } request
   *[other] { $requests } requests
  } to the doorway, each round counted.
workflow-requests-limit = A participant's link of this workflow makes up to { $requests ->
    [one] { $requests } request
   *[other] { $requests } requests
  } to the doorway, each round counted; the per-link limit is { $limit }.
workflow-requests-over = A participant's link of this workflow may make up to { $requests ->
    [one] { $requests } request
   *[other] { $requests } requests
  } to the doorway, each round counted, more than the per-link limit of { $limit }: someone answering every round would be refused. Raise the limit on the Interaction settings page.
workflow-versions = Versions
workflow-versions-help = Every save makes a new version. A running instance stays on the version it started on until it ends; new instances start on the newest.
workflow-version = Version
workflow-version-created = Saved
workflow-version-running = Running instances
workflow-version-ended = Ended instances
workflow-version-newest = newest
workflow-version-delete = Delete version { $number }
workflow-edit-named = Edit { $label }
workflow-delete-named = Delete { $label }
workflow-save-makes-version = You are editing version { $version }. Saving a changed definition makes a new version; { $running ->
    [0] no instance is running now.
    [one] the one running instance stays on the version it has.
   *[other] the { $running } running instances stay on the version they have.
}
workflow-delete-explain = The workflow disappears from the lists and no new instance can start on it. Ended instances keep their history. This cannot be undone.
workflow-delete-confirm = Delete the workflow
workflow-delete-running = This workflow cannot be deleted: { $running ->
    [one] one instance is still running on it.
   *[other] { $running } instances are still running on it.
} Let them end first.
workflow-deleted = The workflow was deleted.
workflow-version-delete-title = Delete version { $number } of { $label }
workflow-version-delete-explain = The version disappears from the workflow's page. Instances that ended on it keep their history.
workflow-version-delete-running = This version cannot be deleted: { $running ->
    [one] one instance is still running on it.
   *[other] { $running } instances are still running on it.
}
workflow-version-delete-last = The newest version cannot be deleted: a workflow keeps at least one.
workflow-version-deleted = The version was deleted.
instance-version = version
instance-participant = Participant
instance-nothing-to-issue = No participant has anything left to answer: no link can be issued.
link-issued = Issued
link-expires = Expires
link-state = State
link-state-active = Active
link-state-expired = Expired
link-state-revoked = Revoked
link-state-used-up = Used up
instance-link-revoke = Revoke the { $participant } link
instance-link-revoked = The link was revoked.
instance-revoke-title = Revoke every link of #{ $id } { $title }?
instance-revoke-explain = Every link and payment return issued for this instance stops working at once, including any a participant is using right now. You can issue new links afterwards.
history-participant = Participant
event-link-revoked = Link revoked
actor-cli = command line
history-decision = Decision
history-decision-approve = Approved
history-decision-reject = Rejected
history-comment = Comment
history-payment = Payment
history-paid = Paid
link-instance-over = This instance has ended: there is nothing left to answer.
link-participant-unknown = “{ $participant }” is not a participant of this instance's workflow version (participants: { $participants }).
link-participant-missing = Name the participant the link is for: { $participants }.
link-participant-done = { $participant } has nothing left to answer in this instance.
definition-participant = Line { $line }: a participant after @ is lower-case letters, digits and _ (for example form@supplier).
definition-participant-and-branches = Line { $line }: a step has either one participant (@name) or parallel branches ([a,b]), not both.
status-notice = Payment notice request limits
status-notice-on = { $per_payment } per payment and { $total } in total every { $period } s (flood store: { $backend })
status-notice-off-switch = Off: the site-wide switch is off
status-notice-off-zero = Off: both notice limits are 0
status-notice-off-period = Off: the period is 0 seconds
status-notice-off-switch-description = Nothing caps the payment provider's notices (POST /notice/test-provider): the request limits switch is off. Turn on "Count and limit requests" in Settings › Request limits, or run: { $fix }
status-notice-off-description = Nothing caps the payment provider's notices (POST /notice/test-provider). Set them under Settings › Interaction, or run: { $fix }
status-provider = Payment provider
status-provider-test = Test provider (no money moves)
status-provider-test-description = Payments go through the built-in test provider. Turn it off with: orchestra config set orchestra.test_provider false
status-provider-test-public-description = This site is public (https) and its payments go through the built-in test provider: payers would believe they paid. Turn it off with: orchestra config set orchestra.test_provider false
status-provider-off = Off
notices-title = Payment notices
notices-intro = The payment provider confirms each payment by a signed notice sent to POST /notice/test-provider. These limits count those notices through the same guard as the doorway, under the same switch and period. 0 turns a limit off.
notices-per-payment = Notices per payment in a period
notices-per-payment-help = A provider sends one notice per payment, and retries a few times when it gets no answer: 10 is plenty.
notices-total = Notices in a period, all payments together
notices-total-help = Size it from the payments you expect in a period, times the per-payment limit.
notices-test-provider = Take payments through the built-in test provider
notices-test-provider-help = On as shipped, so the examples can be paid. No money moves: turn it off on a public site.
notices-state-counting = Notices are being counted and limited.
notices-state-report-only = Notices are counted in report-only mode: none is refused, and the status report shows what would have been.
notices-state-switch-off = Notices are not counted: the request limits switch is off, so these numbers are kept but nothing is counted.
notices-state-period-zero = Notices are not counted: the period is 0 seconds.
notices-state-not-counting = Notices are not counted: the switch is on, but both limits are 0.
notices-state-per-payment-only = Each payment's notices are capped, but the total is off: notices for many payments are not capped.
notices-state-total-only = The total of notices is capped, but not each payment's: one payment's notices can spend the whole total.
# Issue 9
settings-login-limits = Sign-in attempts
settings-login-limits-help = Decided before any password is checked, whatever the switch above says; a refused attempt is not checked at all and counts nothing. Each address's attempts are counted; for an existing account, its failed attempts, from each address and from all together, so that one address's guesses lock only that address out. A successful sign-in counts nothing per account. 0 turns a limit off. The per-address limit also counts API requests with a token this site does not know (docs/api.md).
settings-login-per-address = Attempts per client address
settings-login-address-period = Per address, over (seconds)
settings-login-per-account = Failed attempts per account from one address
settings-login-account-total = Failed attempts per account from all addresses
settings-login-account-period = Per account, over (seconds)
status-check-failed = Could not be checked: the database cannot be read
status-database-vanished = { $backend }, the file was deleted or replaced
status-database-vanished-description = The server refuses every write so nothing is lost into a deleted file. Put the database back (from a backup if need be) and restart the server.
status-database-locked = { $backend }, locked for writes
status-database-locked-description = Another process holds the database's write lock: every write (answers, sign-ins, settings) waits for it and then fails with a 503, while pages that only read keep answering. Find what holds it (a backup, a sqlite3 shell left in a transaction) and end it.
status-database-read-only = { $backend }, read-only
status-database-read-only-description = The database can be read but not written: every write (answers, sign-ins, settings) fails with a 503. Give the server's user write access to the database file and its directory (SQLite), or point it at the primary server (PostgreSQL).
status-database-not-set-up = { $backend }, not set up
status-login = Sign-in limits
status-login-on = { $per_address ->
        [one] { $per_address } attempt
       *[other] { $per_address } attempts
    } per address every { $address_period } s; { $per_account ->
        [one] { $per_account } failure
       *[other] { $per_account } failures
    } per account and address, { $account_total } per account, every { $account_period } s
status-login-off = Nothing limits sign-in attempts: every limit is 0.
status-login-off-description = Anyone can try passwords as fast as the server checks them. Set them in Settings › Request limits, or: orchestra config set login.limits.per_account 5
status-proxies = Client addresses
status-proxies-none = Taken from the connection; no proxy is trusted
status-proxies-named = Read from { $header } only, as set by { $count ->
        [one] { $count } trusted proxy address or range
       *[other] { $count } trusted proxy addresses or ranges
    }
status-proxies-ignored = Forwarded headers arrive, but no proxy is trusted
status-proxies-ignored-description = Every visitor behind the proxy counts as the proxy's address, so one visitor's sign-in attempts can lock out the others. Set ORCHESTRA_TRUSTED_PROXIES to the proxy's address (see docs/operations.md).
definition-too-large = A workflow definition is at most { $max } characters.
definition-too-many-fields = Line { $line }: a form has at most { $max } fields.
actor-api = API token { $token }

# Issue 12: API tokens
tokens-title = API tokens
tokens-intro = Programs that start instances and issue links call the API (/api/v1/) with a token. Each token has a bucket of its own: a rate per minute and a burst, and a scope: what it may do, over which instances and workflows. See docs/api.md.
token-name = Name
token-rate = Requests per minute
token-burst = Burst
token-last-used = Last used
token-state = State
token-active = Active
token-revoked = Revoked
token-never-used = Never
token-revoke = Revoke the token { $name }
token-revoke-explain = Programs using this token get 401 at once. This cannot be undone: make a new token for them.
token-revoked-flash = The token was revoked.
token-new = New token
token-create = Create the token
token-created = The token was created.
token-created-label = The new token, shown this once
token-created-help = Copy it now into the program that will use it: it is kept only as a keyed hash and cannot be shown again.
token-name-help = Lower-case letters, digits, - and _; the name the command line and this list use.
token-name-invalid = Use 1 to 64 lower-case letters, digits, - or _.
token-name-taken = A token already has this name.
token-rate-help = Leave empty for the site's default (Settings › Request limits).
token-burst-help = The most requests at once. Leave empty for the site's default.
token-default-note = * the site's default.
nav-api-tokens = API tokens
instance-link-issued-flash = A link was issued. It is shown below, this once.
settings-tabs-label = Settings sections
status-doorway-off-period = Nothing caps the doorway: the period is 0 seconds.
status-doorway-no-total-description = Each link is capped, but there is no total: a flood of fresh links is not capped. Set a total in Interaction settings, or run: { $fix }
status-doorway-no-per-link-description = Only the total is capped: one link can spend it all and lock everyone out until the period rolls on. Set a per-link limit in Interaction settings, or run: { $fix }
limits-state-switch-off = Nothing caps the interaction doorway: the switch is off, so the limits are kept but nothing is counted.
limits-state-period-zero = Nothing caps the interaction doorway: the period is 0 seconds.
limits-state-per-link-only = Each link is capped, but the total is off: a flood of fresh links is not capped.
limits-state-total-only = The total is capped, but not each link: one link can spend the whole total.
limits-fix-intro = To count with both limits, run:
limits-requests-help = One visit on one link takes two requests per step: the page, then the answer. A form then a payment on one link is 4 requests (show the form, send it, show the payment step, Pay now); the payment provider's return trip comes back on its own handle, counted apart. A per-link limit below 4 refuses Pay now; the example workflows suggest { $suggested } per link, room for reloads and a second try.
status-summary = { $errors ->
    [one] { $errors } error
   *[other] { $errors } errors
  }, { $warnings ->
    [one] { $warnings } warning
   *[other] { $warnings } warnings
  }, { $notes ->
    [one] { $notes } note
   *[other] { $notes } notes
  }
status-fix-link = Fix it in { $form }
status-form-settings = Orchestra settings
status-form-interaction = Interaction settings
status-form-login = Settings › Sign-in limits
dashboard-see-check = Open { $title } in the status report

## Report-only mode (issue 10)
limits-report-only = Report only: count, and record what these limits would refuse, but answer everyone
limits-report-only-help = Use it to size the limits on real traffic: the status report shows how many requests each limit would have refused. Turn it off to enforce; the counts are kept.
limits-state-report-only = Counting in report-only mode: nobody is refused, and the status report shows what would have been.
status-doorway-report-only = Report only: { $per_link } per link and { $total } in total every { $period } s are counted, but nobody is refused (flood store: { $backend })
status-doorway-would-refuse = Would have been refused, per link: { $first_now } this period, { $first_recent } in the last { $periods ->
        [one] { $periods } period
       *[other] { $periods } periods
    }; in total: { $second_now } this period, { $second_recent } in the last { $periods ->
        [one] { $periods } period
       *[other] { $periods } periods
    }. Turn "Report only" off in Interaction settings (/admin/config/orchestra/interaction) to enforce, or: orchestra config set interaction.limits.report_only false
status-notice-report-only = Report only: { $per_payment } per payment and { $total } in total every { $period } s are counted, but nobody is refused (flood store: { $backend })
status-notice-would-refuse = Would have been refused, per payment: { $first_now } this period, { $first_recent } in the last { $periods ->
        [one] { $periods } period
       *[other] { $periods } periods
    }; in total: { $second_now } this period, { $second_recent } in the last { $periods ->
        [one] { $periods } period
       *[other] { $periods } periods
    }. To enforce: orchestra config set notice.limits.report_only false
status-login-report-only = Report only: { $per_address ->
        [one] { $per_address } attempt
       *[other] { $per_address } attempts
    } per address every { $address_period } s, and { $per_account ->
        [one] { $per_account } failure
       *[other] { $per_account } failures
    } per account and address and { $account_total } per account every { $account_period } s are counted, but nobody is refused
status-login-would-refuse = Would have been refused, per address: { $first_now } this period, { $first_recent } in the last { $periods ->
        [one] { $periods } period
       *[other] { $periods } periods
    }; per account and address: { $second_now } this period, { $second_recent } in the last { $periods ->
        [one] { $periods } period
       *[other] { $periods } periods
    }. To enforce: orchestra config set login.limits.report_only false
status-would-refuse-elsewhere = Only a running server knows how many requests would have been refused: see its status report (/admin/reports/status).

## Store faults (issue 10)
settings-on-store-fault = While the shared counts cannot be reached
settings-on-store-fault-count = Count in this server until it is back (as shipped)
settings-on-store-fault-allow = Let every request through
settings-on-store-fault-refuse = Refuse every counted request
settings-on-store-fault-help = The counts are kept in the database, shared by every server. While it cannot be reached, each server can count on its own, answer everyone, or refuse everyone. Sign-ins follow this choice too.
status-flood-store = Flood store
status-flood-store-ok = Syncing ({ $backend }); while it fails: { $on_fault ->
    [allow] let every request through
    [refuse] refuse every counted request
   *[count] count in this server
} (on_store_fault = { $on_fault })
status-flood-store-failing = Failing for { $seconds } s ({ $backend })
status-flood-store-failing-description = { $decisions ->
        [one] { $decisions } counted request was decided
       *[other] { $decisions } counted requests were decided
    } without the store, under the choice "{ $on_fault ->
    [allow] let every request through
    [refuse] refuse every counted request
   *[count] count in this server
}". Counting through the store resumes, and what was counted meanwhile is written, once the database answers again.
settings-api-limits = The integrator API
settings-api-limits-help = How many requests each API token may make, unless the token has its own: so many per minute, and at most so many at once. A request signed by a trusted integrator gets more (docs/api.md). These hold only while Count and limit requests (above) is on; the caps on running instances and links hold whatever it says.

## Sizing chart (issue 10, part 2)
sizing-title = { $address ->
    [notice] Payment notices per period
    [login-address] Sign-in attempts per period, by client address
    [login-account] Sign-in attempts per period, by account and client address
   *[doorway] Doorway requests per period
}
sizing-intro = { $address ->
    [notice] What the payment notice address counted
    [login-address] What the sign-in counted against its per-address limit
    [login-account] Attempts on existing accounts that reached a password check, by account and client address, against the failures each pair may make; the total is the account's from all addresses
   *[doorway] What the doorway counted
} in each of the last { $periods ->
        [one] { $periods } period
       *[other] { $periods } periods
    } of { $period } s, against the limits set now: where a limit bit, or would have. This server keeps these figures since it started (each server its own); reload the page for the current period so far.
sizing-empty = Nothing has been counted yet in the last { $periods ->
        [one] { $periods } period
       *[other] { $periods } periods
    } of { $period } s. The chart appears once { $address ->
    [notice] a payment notice has come
    [login-address] someone has tried to sign in
    [login-account] someone has tried to sign in
   *[doorway] the doorway has had requests
} while it counts.
sizing-total-heading = Requests in total, per period
sizing-per-caller-heading = { $address ->
    [notice] Notices per payment: the busiest and the 99th percentile
    [login-address] Attempts per client address: the busiest and the 99th percentile
    [login-account] Attempts per account and address: the busiest and the 99th percentile
   *[doorway] Requests per link: the busiest and the 99th percentile
}
sizing-total-desc = { $periods ->
        [one] { $periods } period
       *[other] { $periods } periods
    } of { $period } s. At most { $most ->
        [one] { $most } request
       *[other] { $most } requests
    } in one period; { $refusals } refused or would have been. Total limit: { $limit }.
sizing-per-caller-desc = { $periods ->
        [one] { $periods } period
       *[other] { $periods } periods
    }. { $address ->
    [notice] The payment with the most notices had at most { $busiest } in one period; 99 % of payments had at most { $p99 }. Per-payment limit: { $limit }.
    [login-address] The busiest client address made at most { $busiest ->
        [one] { $busiest } attempt
       *[other] { $busiest } attempts
    } in one period; 99 % of addresses made at most { $p99 }. Per-address limit: { $limit }.
    [login-account] The most tried account from one address had at most { $busiest ->
        [one] { $busiest } attempt
       *[other] { $busiest } attempts
    } in one period; 99 % of accounts and addresses had at most { $p99 }. Failures per account and address: { $limit }.
   *[doorway] The busiest link made at most { $busiest ->
        [one] { $busiest } request
       *[other] { $busiest } requests
    } in one period; 99 % of links made at most { $p99 }. Per-link limit: { $limit }.
}
sizing-total-tip = { $start }: { $requests ->
        [one] { $requests } request
       *[other] { $requests } requests
    }, { $refusals } refused or would have been
sizing-per-caller-tip = { $start }: { $address ->
    [notice] the payment with the most notices ({ $caller }) had { $busiest }; 99 % of payments had at most { $p99 }
    [login-address] the busiest client address ({ $caller }) made { $busiest ->
        [one] { $busiest } attempt
       *[other] { $busiest } attempts
    }; 99 % of addresses made at most { $p99 }
    [login-account] the most tried account from one address ({ $caller }) had { $busiest ->
        [one] { $busiest } attempt
       *[other] { $busiest } attempts
    }; 99 % of accounts and addresses had at most { $p99 }
   *[doorway] the busiest link ({ $caller }) made { $busiest ->
        [one] { $busiest } request
       *[other] { $busiest } requests
    }; 99 % of links made at most { $p99 }
}
sizing-limit-off = off (0)
sizing-now = now
sizing-legend-requests = Requests answered
sizing-legend-refusals = Refused, or would have been (report only)
sizing-legend-current = The current period, so far (dashed)
sizing-legend-total-limit = The total limit: { $limit }
sizing-legend-busiest = { $address ->
    [notice] The busiest payment's notices
    [login-address] The busiest client address's attempts
    [login-account] The most tried account's attempts from one address
   *[doorway] The busiest link's requests
}
sizing-legend-p99 = { $address ->
    [notice] 99th percentile of payments
    [login-address] 99th percentile of client addresses
    [login-account] 99th percentile of accounts and addresses
   *[doorway] 99th percentile of links
}
sizing-legend-per-caller-limit = { $address ->
    [notice] The per-payment limit: { $limit }
    [login-address] The per-address limit: { $limit }
    [login-account] Failures per account and address: { $limit }
   *[doorway] The per-link limit: { $limit }
}
sizing-table-summary = The same figures as a table
sizing-col-period = Period from (UTC)
sizing-col-requests = Requests
sizing-col-busiest = { $address ->
    [notice] Busiest payment (keyed hash)
    [login-address] Busiest client address (keyed hash)
    [login-account] Most tried account and address (keyed hash)
   *[doorway] Busiest link (keyed hash)
}
sizing-col-busiest-count = Its requests
sizing-col-p99 = 99th percentile
sizing-col-refused = Refused
sizing-col-would-refuse = Would have been refused
sizing-current = (so far)
sizing-approximate = More than { $callers } { $address ->
    [notice] payments
    [login-address] client addresses
    [login-account] accounts and addresses
   *[doorway] links
} came in the periods marked so: their busiest and percentile are estimates.

# Issue 18: API token scopes
token-scope = Scope
token-abilities = What it may do
token-ability-read = Read instances (read)
token-ability-start = Start instances (start)
token-ability-links = Issue and revoke links (links)
token-ability-workflows = Create workflows and save new versions of their definitions (workflows)
token-reach = Which instances
token-reach-own = Only the instances it started
token-reach-all = Every instance, including those started by administrators and other tokens
token-reach-own-short = the instances it started
token-reach-all-short = every instance
token-workflows = Which workflows
token-workflows-help = Tick none for every workflow, including workflows made later.
token-workflows-every = every workflow
token-abilities-empty = Choose at least one thing the token may do.
token-ability-unknown = "{ $value }" is not an ability: read, start, links or workflows.
token-reach-unknown = "{ $value }" is not a reach: own or all.
token-workflow-unknown = There is no workflow named "{ $name }".

# A step shows earlier answers; a step's words in other languages.
workflow-show-help = "| show 1" shows this step's participant what step 1 was answered with (several: "show 1, 2"); nothing of another step is shown unless asked.
workflow-translation-help = a line under a step gives its words in another language (en or fr): the title, then for a form its labels in order after a bar. A visitor sees their language, else the step's own words.
definition-show = Line { $line }: "show" names earlier steps by number, as in "| show 1, 2".
definition-condition = Line { $line }: write a condition as a field of an earlier step, an operator and a value, as in "| only if Amount > 1000"; the operators are { $operators }, and "and" joins conditions.
definition-condition-twice = Line { $line }: a step has one "only if"; join its conditions with "and".
definition-condition-nothing-before = Line { $line }: "only if { $field }" reads an earlier answer, but no step before this one asks a field.
definition-condition-field = Line { $line }: “{ $field }” is no field of an earlier step; a condition can read { $allowed }.
definition-condition-number = Line { $line }: “{ $value }” is not a number to compare “{ $field }” with.
definition-condition-order = Line { $line }: “{ $field }” is not a number field; compare it with = or ≠.
definition-condition-option = Line { $line }: “{ $value }” is not an option of “{ $field }”: { $allowed }.
definition-quorum = Line { $line }: "2 of 3" (or "any") says how many branches of a step close it, from 1 to its number of branches, as in "review[alice,bob,carol]: Sign off | 2 of 3".
definition-route-back = Line { $line }: "on reject back to N" sends the instance back to an earlier step: N is the number of a step above this one, as in "review@manager: Check | on reject back to 1".
definition-route-go = Line { $line }: a route goes to a step by its number or to the end: "on approve go 4", "on reject go end", "if Amount > 1000 go 3". The step must exist and not be this one.
definition-route-twice = Line { $line }: a step has at most one "on reject" and one "on approve".
definition-rounds = Line { $line }: "rounds N" says how many times an instance may go round, from 1 to { $max }, as in "rounds 3".
definition-expires-to = Line { $line }: "expires … then to { $participant }" hands the step to another participant of this workflow when the deadline passes: name one that answers another step, for a step with one participant.
definition-notify = Line { $line }: "notify:" names, once, the participants of this workflow emailed the outcome besides the requester, as in "notify: finance, manager".
definition-keep = Line { $line }: "keep:" says, once, how long an ended instance keeps its answers, files and contacts, as in "keep: 365 days" (1 to 36500) or "keep: forever".
definition-segments = Line { $line }: this step has one bar too many; only a form's fields, a payment's amount and "show" go after bars.
definition-translation-first = Line { $line }: a translation line goes under the step it translates.
definition-translation-twice = Line { $line }: this step already has words in this language.
definition-translation-labels = Line { $line }: give the { $count ->
    [one] field's label
   *[other] { $count } fields' labels
} after a bar, in order, separated by commas.

# Where issued links point (status report, dashboard).
status-base-url = Links
status-base-url-ok = Built on { $url }
status-base-url-elsewhere = Built on { $base }, but the server listens on { $listening }
status-base-url-elsewhere-description = Links issued now lead nowhere. Save the address visitors reach this server at as the base URL under Settings, or run the server on the address the base URL names.

# An older version's definition on a workflow's page.
workflow-definition-of = Steps of version { $number }
workflow-older-version-help = An older version: instances that started on it keep it until they end.
workflow-show-newest = Show the newest version.
definition-options = Line { $line }: the choice “{ $field }” lists 2 to 30 different options separated by slashes, as in "Size (choice: Small / Medium / Large)".
definition-translation-options = Line { $line }: give a choice as many options as the step's own line, separated by slashes.
definition-help = Line { $line }: "help:" takes a few words (at most 500 characters), once per line.
workflow-choice-help = a choice between options; "help:" adds a few words under the step's title
option-help-help = a few words under the step's title for whoever answers it (at most 500 characters)
option-only-if-help = asks the step only when the conditions on earlier answers hold (=, ≠, <, ≤, >, ≥; "and" joins them); otherwise it is skipped
option-quorum-help = for a step with branches: closes it as soon as that many approve ("any": one), or as rejected once they no longer can
option-remind-help = reminds a participant who has not answered, after the wait and then every wait, at most that many times
option-expires-help = the step's deadline: the instance ends as expired when it passes unanswered
option-expires-next-help = at the deadline, the instance goes on to the next step instead
option-expires-to-help = at the deadline, the step is handed to whoever answers for that other participant, and they are emailed
option-forward-help = the step's participant may forward it to a colleague from the link's page
option-reject-back-help = a rejection sends the instance back to that earlier step for changes: its participant sees the comment and their answers
option-reject-go-help = a rejection goes to that step ("end": the instance ends as rejected)
option-approve-go-help = once approved (a form: answered), goes to that step ("end": the instance completes)
option-if-go-help = goes to that step ("end": completes) when the conditions hold, as "only if" reads them
option-rounds-help = how many rounds an instance may go through when routes send it back (5 unless said); past them it ends as rejected
option-notify-help = a line of its own: these participants are emailed the outcome too, besides whoever answered the first step (when they have an address)
option-keep-help = a line of its own: days an ended instance keeps its answers, files and contacts before cron erases them (its steps, times and answer hashes stay); "keep: forever" keeps them; overrides the site's records.retention_days
# Lists that page (issue 21).
instances-filter-any = Any
instances-started-by = Started by
instances-search = Search in the subject
instances-filter-apply = Filter
instances-filter-clear = Clear the filters
instances-none-match = No instance matches these filters here.
instances-total = { $count ->
        [0] No instance
        [one] One instance
       *[other] { $count } instances
    }
instances-total-more = { $count ->
        [one] More than one instance
       *[other] More than { $count } instances
    }
instances-total-at-least = At least { $count } matching among the newest instances
instances-search-window = { $count ->
        [one] A search looks through one instance a page; look further with “Older”.
       *[other] A search looks through { $count } instances a page; look further with “Older”.
    }
started-by-admin = An administrator
started-by-cli = The command line
started-by-api = An API token
pager-label = Pages
pager-newer = ← Newer
pager-older = Older →
pager-newest = Newest
pager-older-history = Earlier history
instance-links-count = { $count ->
        [0] No link issued yet.
        [one] One link issued.
       *[other] { $count } links issued, newest first.
    }
instance-history-count = { $count ->
        [one] One event.
       *[other] { $count } events; the page shows up to 50, oldest first.
    }
definition-file = Line { $line }: the file field “{ $field }” takes a size up to 100 MB (such as 5 MB) and kinds among { $kinds }, separated by commas.
definition-files = Line { $line }: a form takes at most { $max } file fields.
interaction-max-file = Largest file a form takes, in MB
interaction-max-file-help = A file field takes 10 MB unless its definition names a size; no field takes more than this. Uploads stream to the database, so this bounds disk, not memory.

# The field types' table (src/domain/workflow/options.rs)
workflow-types-help = A field's type goes in brackets after its label:
definition-range = Line { $line }: the number field “{ $field }” takes its bounds as min..max, such as 0..100000 (a dot for decimals, the smaller first), not “{ $given }”.
type-text-help = one line of text, at most 200 characters; a field with no type in brackets is text
type-long-help = several lines of text, at most 5000 characters
type-number-help = a number, typed as the visitor's language writes it (1 250,50 or 1,250.50) and stored as 1250.5; min..max after a comma bounds it, both included
type-email-help = an email address
type-date-help = a date, picked from a calendar or typed as the visitor's language writes it (31/12/2027 in French, 12/31/2027 in English); stored as 2027-12-31
type-checkbox-help = one box to tick, stored as yes (or empty when not ticked); a required one is a consent: the form does not go on until it is ticked
type-url-help = a web address starting with http:// or https://, at most 2000 characters; later steps show it as a link
type-choice-help = one of the options, 2 to 30, separated by slashes
type-file-help = a file up to 10 MB by default, or the size named, of the kinds named (pdf, image, text, office, zip) or documents by default; checked by its content

instances-waiting = Waiting on
instances-waiting-since = since
instances-csv = Download CSV

evidence-open = Evidence record (printable, with its hash)
evidence-crumb = Evidence
evidence-title = Evidence record of instance #{ $id }: { $title }
evidence-version = Version
evidence-step-round = Step and round
evidence-step-round-value = step { $step }, round { $round }
evidence-started = Started
evidence-site = Site
evidence-step-of-round = step { $step } “{ $title }”, round { $round }
evidence-verified-email = verified by an emailed code
evidence-hash-heading = SHA-256 of this record
evidence-hash-help = The SHA-256 of the JSON record (Download JSON) in its canonical form: keys sorted, no spaces, UTF-8. Anyone holding a copy can compute it again and compare; a single changed character gives another hash.
evidence-generated = Made on
evidence-steps = Steps
evidence-history = History
evidence-links = Links
evidence-emails = Emails
evidence-files = Files
evidence-contacts = Contacts
evidence-none = None.
evidence-answer-sha256 = Answer's SHA-256:
evidence-through-link = through link record
evidence-client = client (keyed hash)
evidence-col-title = Title
evidence-col-kind = Kind
evidence-col-participants = Participants
evidence-col-participant = Participant
evidence-col-issued = Issued
evidence-col-expires = Expires
evidence-col-revoked = Revoked
evidence-col-used-by = Answers through it
evidence-col-to = To
evidence-col-step = Step
evidence-col-state = State
evidence-col-when = When
evidence-col-name = Name
evidence-col-size = Size
evidence-col-type = Type
evidence-col-address = Address
evidence-erased = Erased on
evidence-receipts = Receipts
evidence-col-receipt = Receipt (jti)
evidence-col-answer = Answer
evidence-download-json = Download JSON
evidence-back = Back to the instance
link-state-void = Void (site keys rotated)
status-voided-links = Links voided by a key rotation
status-voided-links-value = { $count ->
    [one] 1 running instance has no working link left
   *[other] { $count } running instances have no working link left
  }
status-voided-links-description = The site keys were rotated and these participants' links no longer open. Send fresh links from Rotate keys on this page, or run: orchestra keys resend
status-form-keys = Rotate keys
keys-rotate-title = Rotate keys
keys-rotate-what = New site keys: every link and continuation handle issued so far stops working (its page says so, and its holder can ask for a fresh one), and every administrator signs in again, you too. API tokens and webhook endpoints keep working.
keys-rotate-resend = Email a fresh link to every participant a running instance waits on (to their address on file)
keys-rotate-confirm = Rotate keys
keys-resend-title = Send fresh links
keys-resend-what = Without rotating: a fresh link email to every participant a running instance waits on and who has an address.
keys-resend-confirm = Send fresh links
keys-resent = Fresh link emails are queued for every participant a running instance waits on.
option-verify-email-help = the link's page shows nothing of the step until its holder types a six-digit code emailed to the participant's address (10 minutes, 5 tries, 3 codes an hour)
settings-advanced = Advanced: request limits
settings-advanced-intro = Limits keep a flood of requests, or someone guessing passwords, from slowing the site down for everyone. The defaults suit most offices; come back here when the status report suggests a change.
interaction-advanced-intro = How many requests one link, and all links together, may make before the site answers "too many requests". The defaults suit most workflows.
settings-advanced-sizing = Advanced: how busy each limit has been
settings-operator-note = For operators: each limit is a counter over a rolling period, kept in the flood store (ORCHESTRA_FLOOD: sql or memory); API tokens draw from a bucket with a rate and a burst; the charts show each limit's busiest caller and the 99th percentile. The same settings are set with "orchestra config set" (docs/interaction.md).

## OpenID Connect sign-in
login-oidc = Sign in with { $provider }
oidc-refused = Signing in with { $provider } did not finish. Start again from this page.
oidc-unavailable = { $provider } cannot be reached just now. Try again in a moment, or sign in with your name and password.
oidc-unverified = { $provider } did not give a verified email address, so it cannot sign you in here.
oidc-unknown = No administrator of this site has the address { $provider } gave. An owner can add it to your account.
