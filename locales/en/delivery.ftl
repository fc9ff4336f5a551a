# Issue 22: the outbox and webhooks (docs/delivery.md).
cli-about-webhook = Webhook endpoints: webhook create URL, list, delete ID, enable ID, disable ID, retry ID
cli-about-webhook-create = Add a webhook endpoint; prints its signing secret once
cli-arg-webhook-url = Where messages are posted (https; http and private addresses only with ORCHESTRA_WEBHOOKS_ALLOW_PRIVATE=1)
cli-arg-webhook-events = The events it takes, comma-separated (every event when left out)
cli-about-webhook-list = List webhook endpoints: id, URL, events, state, consecutive failures, the API token that registered it (- for an administrator)
cli-about-webhook-delete = Delete a webhook endpoint
cli-arg-webhook-id = The endpoint's number, as webhook list shows it
cli-webhook-created = Webhook endpoint { $id } created: its signing secret is printed above, this once.
cli-webhook-deleted = Webhook endpoint { $id } deleted.
cli-about-webhook-enable = Enable a disabled webhook endpoint again, its run of failures forgotten
cli-webhook-enabled = Webhook endpoint { $id } enabled: { $count } waiting messages are due now, and new messages are queued for it again.
cli-about-webhook-disable = Disable a webhook endpoint: nothing is sent to it, and its messages wait until it is enabled again
cli-webhook-disabled = Webhook endpoint { $id } disabled: its messages wait until it is enabled again.
cli-about-webhook-retry = Send at once what waits for a webhook endpoint (messages due later, failed or set aside), each with a fresh retry schedule
cli-webhook-retried = Webhook endpoint { $id }: { $count } messages due now.
cli-webhook-retried-disabled = Webhook endpoint { $id } is disabled: what waits for it is sent once it is enabled (webhook enable { $id }).
cli-webhook-unknown = No webhook endpoint { $id }.
webhook-url-invalid = The URL is not one a webhook can be sent to (an http or https URL, without a user name or password).
webhook-url-not-https = A webhook URL must start with https://.
webhook-url-private = This address is inside the server's own network (loopback, private, link-local or metadata): webhooks are not sent there.
webhook-url-unresolved = The URL's host name does not resolve.
webhook-event-unknown = Unknown event { $event }. Events: { $events }.
webhook-too-many = This token holds { $cap } webhook endpoints, as many as it may: delete one first.
status-webhooks = Webhooks
status-webhooks-value = { $total ->
    [one] 1 endpoint
   *[other] { $total } endpoints
}, { $disabled } disabled
status-webhooks-disabled-description = An endpoint is disabled once a message has failed every try of about three days with nothing taken meanwhile; its messages wait. See its delivery log on the Webhooks page, then enable it again once its receiver works: what waited is sent then.
status-webhooks-late = Deliveries are waiting past their time: the oldest was due { $at }. Is the server's sender running (or orchestra cron)?
