## The interaction doorway, its refusals and the test payment provider.

doorway-too-many-requests = Too many requests for this page right now. Please try again later.
doorway-refused-title = This link cannot be used
doorway-refused = This link is not valid. It may have expired or been replaced; ask the person who sent it for a new one.
doorway-step = Step
doorway-branch = for
doorway-submit = Send
doorway-submit-review = Send my decision
doorway-form-has-errors = Some answers need your attention. Nothing was sent yet.
doorway-review-decision = Your decision
doorway-approve = Approve
doorway-reject = Reject
doorway-comment = Comment
doorway-review-choose = Choose approve or reject.
doorway-review-reason = Say why you reject it in the comment.
doorway-amount = Amount to pay:
doorway-pay = Pay now
doorway-payment-cancelled = The payment was cancelled. You can try again.
doorway-sent-back = Sent back to you for changes by { $who }: “{ $comment }” Your earlier answers are filled in below.
doorway-forward = Forward to a colleague
doorway-forward-help = Someone else should answer this step? Give their address: they get a link of their own, and this link stops working.
doorway-forward-email-label = Their email address
doorway-forward-name-label = Their name
doorway-forward-lang-label = Their language
doorway-forward-submit = Forward this step
doorway-forward-email = Give the address of the colleague who should answer.
doorway-forward-limit = This step has been forwarded { $max } times already; it cannot be forwarded again.
doorway-forward-not-offered = This step cannot be forwarded now.
doorway-forwarded-title = Forwarded
doorway-forwarded = { $to } has been emailed a link to answer this step. This link no longer works.
doorway-thanks-title = Thank you
doorway-thanks-next = Your answer was recorded. The next step is in other hands; there is nothing more for you to do.
doorway-thanks-waiting = Your answer was recorded. Others still have to answer this step.
doorway-thanks-complete = Your answer was recorded, and everything is now complete.
doorway-rejected = The request was rejected; there is nothing more to answer.
doorway-closed-title = Nothing left to answer
doorway-complete = Every step of this request has been answered. Thank you.
doorway-cancelled = This request was cancelled; there is nothing more to answer.
doorway-nothing-title = Nothing to answer here
doorway-nothing-here = There is nothing for this link to answer right now.
doorway-already-answered = This step was already answered with this link.

provider-title = Test payment provider
provider-banner = TEST MODE: this is Orchestra's built-in test provider. No money moves.
provider-amount = Amount:
provider-explain = Choose what the provider should report back to Orchestra.
provider-pay = Simulate a successful payment
provider-cancel = Cancel the payment

# Issue 8: payments confirmed by the provider's notice
doorway-payment-unavailable = Payments cannot be taken at the moment. Please try again later.
doorway-payment-waiting-title = Waiting for the payment
doorway-payment-waiting = We are waiting for the payment provider's confirmation. This page checks again by itself.
doorway-payment-confirmed-title = Payment confirmed
doorway-payment-confirmed = The payment provider confirmed your payment. Thank you.
provider-settled = This payment is settled.
provider-back = Back to the site

# Earlier answers a step shows (the definition's "show").
doorway-earlier = What was answered before
doorway-earlier-none = Nothing was answered at this step.

# When the link stops working; a warning when that is close; an answer on a just-expired link.
doorway-expires = This link works until
doorway-expires-soon-hours = This link expires in { $hours ->
    [one] about an hour
   *[other] about { $hours } hours
}: answer before then, or ask for a new link.
doorway-expires-soon-minutes = This link expires in { $minutes ->
    [one] a minute
   *[other] { $minutes } minutes
}: answer now, or ask for a new link.
doorway-expired-title = This link has expired
doorway-expired-kept = Your answer was not recorded: this link stopped working on { $expired }. What you typed is below; copy it before you leave this page, and ask whoever sent you the link for a new one.
doorway-choose = Choose…
field-file-too-large = This file is larger than { $size } { $unit ->
        [B] B
        [KB] KB
       *[MB] MB
    }; choose a smaller one.
field-file-kind = This file is not of a kind this field takes ({ $kinds }); its content was checked, not its name.
field-file-again = The form had a mistake, so the file was not kept: choose it again.
field-file-hint = Up to { $size } { $unit ->
        [B] B
        [KB] KB
       *[MB] MB
    }; { $kinds }.
file-size = { $size } { $unit ->
    [B] B
    [KB] KB
   *[MB] MB
}
decimal-separator = .
doorway-fresh-offer = If this link was sent to you by email, you can ask for a fresh one. It goes to the address on file, never to another.
doorway-fresh-button = Email me a fresh link
doorway-fresh-title = A fresh link
doorway-fresh-sent = If this link was yours, a fresh one is on its way to the address on file.

# The emailed code before a `| verify email` step.
doorway-code-title = Check it is you
doorway-code-intro = This step opens once you type a six-digit code emailed to your address.
doorway-code-send = Email me a code
doorway-code-send-again = Email me a new code
doorway-code-sent = A code was emailed to { $address }. It works for { $minutes ->
    [one] one minute
   *[other] { $minutes } minutes
}; look in your spam folder if it is not there after a minute.
doorway-code-label = Code (6 digits)
doorway-code-submit = Continue
doorway-code-wrong = That code is not right. { $left ->
    [one] One more wrong code locks it.
   *[other] { $left } more wrong codes lock it.
}
doorway-code-locked = Too many wrong codes: this code no longer works, even the right one. Ask for a new code.
doorway-code-none = No code is waiting: it expired after { $minutes ->
    [one] one minute
   *[other] { $minutes } minutes
}, was used, or none was asked. Ask for a new one.
doorway-code-sends-left = { $count ->
    [one] One more code can be sent this hour.
   *[other] { $count } more codes can be sent this hour.
}
doorway-code-too-many = { $max } codes were sent in the last hour: you can ask for another in { $minutes ->
    [one] one minute
   *[other] { $minutes } minutes
}.
doorway-code-no-address = This step asks for a code emailed to you, and no address is on file for you here. Ask whoever sent you this link.

## Receipts (domain::receipts)
doorway-receipt-title = Your receipt
doorway-receipt-help = A receipt is a small file signed by this site that says what you answered and when. Keep it: it proves your answer even if you no longer have this link. It holds no link.
doorway-receipt-download = Download your receipt
doorway-receipt-download-step = Download your receipt for “{ $step }”
doorway-receipt-check = Anyone can check it: it is a signed JSON Web Token (JWS, EdDSA) that any JOSE library verifies against this site's public keys at /.well-known/jwks.json.
