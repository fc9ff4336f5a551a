# The drawing of a workflow's flow (workflow and instance pages).
drawing-title = Flow of { $name }: { $count ->
    [one] one step
   *[other] { $count } steps
}
drawing-title-instance = Where this instance stands in { $name }
drawing-step = Step { $n } of { $count } ({ $kind }): { $title }.
drawing-by = by { $who }
drawing-and = and
drawing-only-if = only if { $condition }
drawing-quorum = { $needed } of { $count } needed
drawing-deadline = deadline { $after }, then the instance ends
drawing-deadline-next = deadline { $after }, then the next step
drawing-deadline-to = deadline { $after }, then to { $participant }
drawing-forward = can be forwarded
drawing-days = { $count ->
    [one] 1 day
   *[other] { $count } days
}
drawing-hours = { $count ->
    [one] 1 hour
   *[other] { $count } hours
}
drawing-minutes = { $count ->
    [one] 1 minute
   *[other] { $count } minutes
}
drawing-seconds = { $count ->
    [one] 1 second
   *[other] { $count } seconds
}
drawing-route = { $label } → step { $to }
drawing-route-end = { $label } → end
drawing-route-if = if { $conditions }
drawing-route-approve = approved
drawing-route-reject = rejected
drawing-done = Done
drawing-skipped = Skipped
drawing-current = Current step
drawing-ended-rejected = Rejected here
drawing-ended-expired = Expired here
drawing-ended-cancelled = Cancelled here
drawing-end = End
drawing-end-state = End: { $state }
drawing-words-end = Then the end.
