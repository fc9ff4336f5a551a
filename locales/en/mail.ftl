# Participants' emails, reminders and deadlines (issue 22).

state-expired = Expired
event-emailed = Link emailed
event-reminded = Reminder emailed
event-step-expired = Step expired; moved on
event-skipped = Skipped: its condition did not hold
event-closed-by-quorum = Closed: enough approvals; the others were not needed
event-reassigned = Handed to a new contact; the old links stopped working
event-reopened = Sent back for changes: asked again
event-expired = Expired
doorway-expired = This request expired before it was answered; there is nothing more to answer.
actor-mail = email
actor-deadline = the step's deadline
actor-forward = forwarded by { $participant }

contact-participant-unknown = "{ $participant }" is not a participant of this workflow (or is given twice). Its participants: { $participants }.
contact-email-invalid = Enter an email address such as ada@example.org (at most { $max } characters).
contact-name-invalid = A name has at most { $max } characters, on one line.
contact-lang-invalid = Choose English (en) or French (fr).
link-no-address = { $participant } has no email address in this instance: issue the link and send it yourself.

config-env-smtp-url = ORCHESTRA_SMTP_URL must be an smtp:// or smtps:// URL with a host, such as smtp://127.0.0.1:2525 or smtps://user:password@mail.example.org (its value is not repeated here: it may hold a password).
config-env-mail-from = ORCHESTRA_MAIL_FROM must be an address, such as orchestra@example.org or "Orchestra <orchestra@example.org>".
config-env-smtp-half = Set both ORCHESTRA_SMTP_URL and ORCHESTRA_MAIL_FROM to send emails, or neither.

mail-link-subject = { $step } – { $subject }
mail-reminder-subject = Reminder: { $step } – { $subject }
mail-greeting = Hello { $name },
mail-greeting-anonymous = Hello,
mail-link-intro = { $site } asks you to answer a step of "{ $subject }": { $step }.
mail-reminder-intro = { $site } is still waiting for your answer to a step of "{ $subject }": { $step }. Here is a fresh link; the ones you had still work.
mail-link-action = Open your step
mail-link-expires = This link works until { $expires }.
mail-link-yours = It is yours alone: whoever holds it can answer in your place, so do not forward it.
mail-footer = You receive this email because your address was given for this request ("{ $workflow }") on { $site }.

definition-remind = Line { $line }: write a reminder as "remind 2d x3": a wait of at least 1h, then at most 10 reminders (x1 when not said).
definition-expires = Line { $line }: write a deadline as "expires 7d" or "expires 7d then next": at least 1m, at most 365d.

instance-contacts = Participants' emails
instance-contacts-help = Each participant given an address is emailed their link when their step starts, in their language. Leave a row empty to send the link yourself.
instance-contacts-none = Choose a workflow to see its participants.
instance-contacts-show = Show its participants
contact-email = Email
contact-name = Name
contact-lang = Language
instance-emails = Emails
instance-emails-none = No email for this instance yet.
instance-emails-more = The { $count } newest are shown.
mail-kind-link = Link
mail-kind-reminder = Reminder
mail-state-pending = Waiting
mail-state-sent = Sent
mail-state-failed = Failed
mail-state-skipped = Not needed
mail-due = due { $at }
mail-tries = { $count ->
    [one] 1 try
   *[other] { $count } tries
}
link-send = Send by email
link-sent = The link will be emailed within a few seconds; the history says when it is sent.

status-mail = Email
status-mail-off = No SMTP server is set (ORCHESTRA_SMTP_URL, ORCHESTRA_MAIL_FROM), and participants have addresses: their links are not sent; the emails wait.
status-mail-unset = No SMTP server is set; no participant has an address yet.
status-mail-ok = Emails go through { $server }; none waits.
status-mail-unreachable = The SMTP server { $server } does not answer: emails wait and go once it is back.
status-mail-waiting = Emails go through { $server }; the oldest waiting was due { $at }.
status-mail-failed = { $count ->
    [one] 1 email failed for good
   *[other] { $count } emails failed for good
} (see each instance's Emails).

cli-arg-contact = A participant's email address, such as legal=ada@example.org (once per participant): their link is emailed when their step starts
cli-arg-contact-name = A participant's name in their emails, such as legal=Ada
cli-arg-contact-lang = A participant's language, en or fr, such as legal=fr (en when not given)
cli-arg-send = Email the link to the participant's address (given at the start) rather than print it; it lives the site's default lifetime
cli-contact-spelling = Write a contact as PARTICIPANT=VALUE, with an address for every participant named: { $value }
cli-contact-refused = { $participant }: { $reason }
api-send-ttl = An emailed link lives the site's default lifetime: leave ttl_seconds out with "send": true.
config-env-smtp-plain = ORCHESTRA_SMTP_URL sends a password over plain smtp:// to another machine, where anyone on the way could read it: use smtps://, or add ?tls=required for STARTTLS.
instance-started-emailed = The instance was started. Each participant with an address is emailed their link when their step starts; the Emails section below follows them.
mail-closed-subject = No longer needed: { $step } – { $subject }
mail-closed-intro = The step "{ $step }" of "{ $subject }" on { $site } closed with enough approvals, so nothing more is needed from you. Your link no longer offers a decision.
mail-outcome-complete-subject = Approved: { $subject }
mail-outcome-complete-intro = "{ $subject }" on { $site } is complete: every step was answered.
mail-outcome-rejected-subject = Rejected: { $subject }
mail-outcome-rejected-intro = "{ $subject }" on { $site } was rejected at the step "{ $step }".
mail-outcome-expired-subject = Expired: { $subject }
mail-outcome-expired-intro = "{ $subject }" on { $site } ended: the step "{ $step }" passed its deadline without an answer.
mail-outcome-cancelled-subject = Cancelled: { $subject }
mail-outcome-cancelled-intro = "{ $subject }" on { $site } was cancelled.
mail-outcome-comment = The last comment
mail-outcome-answers = What you submitted
mail-kind-closed = Not needed
mail-kind-outcome = Outcome
# A moment in an email, in UTC: month, day, year, time (17:47).
mail-date = { $month ->
    [1] January
    [2] February
    [3] March
    [4] April
    [5] May
    [6] June
    [7] July
    [8] August
    [9] September
    [10] October
    [11] November
   *[12] December
} { $day }, { $year } at { $time } UTC
# The colon after a label ("Open your step:").
mail-colon = :
# A start that gives addresses on a site with no SMTP server: its emails wait.
instance-started-unsent = The instance was started. No SMTP server is set (ORCHESTRA_SMTP_URL, ORCHESTRA_MAIL_FROM): the participants' emails wait and will go once one is set.
cli-mail-unsent = Warning: no SMTP server is set (ORCHESTRA_SMTP_URL, ORCHESTRA_MAIL_FROM); the participants' emails wait and will go once one is set.

# The emailed code before a `| verify email` step: the code is in the body, never the subject.
mail-code-subject = Your code for { $site }
mail-code-intro = Here is your code to open your step of "{ $subject }" ({ $step }):
mail-code-expires = It works for { $minutes ->
    [one] one minute
   *[other] { $minutes } minutes
}. Type it on the page that asked for it.
mail-code-ignore = If you did not ask for it, ignore this email: nobody can open your step without it.
mail-kind-code = Code
instance-started-unverifiable = The instance was started. A step asks its participant for a code emailed to their address, and someone it asks has none: they cannot answer it until an administrator hands the step to a contact with an address.
cli-code-unverifiable = Warning: { $participant } must type a code emailed to their address before step { $step }, and has no address in this instance: they cannot answer it.
mail-outcome-receipts = Your receipts are attached (receipt-….jws): each is signed by this site and says what you answered and when. Anyone can check one with a JOSE library against this site's public keys at /.well-known/jwks.json. They hold no link.

## Administrators' own emails
mail-admin-footer = You receive this email because you are an administrator of { $site }, or were invited to be one.
mail-admin-expires = This link works once, until { $expires }.
mail-admin-invite-subject = You are invited to administer { $site }
mail-admin-invite-intro = You were invited to administer { $site } as { $name }. Choose your password to begin.
mail-admin-invite-action = Choose my password
mail-admin-reset-subject = A new password for { $site }
mail-admin-reset-intro = A link to choose a new password for { $name } on { $site } was made for you. If you did not ask for it, tell another administrator; your password stays as it is.
mail-admin-reset-action = Choose a new password
mail-admin-password-subject = Your password on { $site } was changed
mail-admin-password-intro = The password of { $name } on { $site } was just changed, and every other session was signed out. If it was not you, ask another administrator to disable your account and reset its password now.
mail-admin-two-step-on-subject = Two-step sign-in is on for { $site }
mail-admin-two-step-on-intro = Two-step sign-in was just turned on for { $name } on { $site }: signing in now asks for a code after the password. If it was not you, tell another administrator now.
mail-admin-two-step-off-subject = Two-step sign-in is off for { $site }
mail-admin-two-step-off-intro = Two-step sign-in was just turned off for { $name } on { $site }: the password alone signs in again. If it was not you, tell another administrator now.
