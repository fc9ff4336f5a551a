# Le dessin du déroulement d'un workflow (pages d'un workflow et d'une instance).
drawing-title = Déroulement de { $name } : { $count ->
    [one] une étape
   *[other] { $count } étapes
}
drawing-title-instance = Où en est cette instance dans { $name }
drawing-step = Étape { $n } sur { $count } ({ $kind }) : { $title }.
drawing-by = par { $who }
drawing-and = et
drawing-only-if = seulement si { $condition }
drawing-quorum = { $needed } sur { $count } nécessaires
drawing-deadline = délai { $after }, puis fin de l'instance
drawing-deadline-next = délai { $after }, puis l'étape suivante
drawing-deadline-to = échéance { $after }, puis à { $participant }
drawing-forward = peut être transmise
drawing-days = { $count ->
    [one] 1 jour
   *[other] { $count } jours
}
drawing-hours = { $count ->
    [one] 1 heure
   *[other] { $count } heures
}
drawing-minutes = { $count ->
    [one] 1 minute
   *[other] { $count } minutes
}
drawing-seconds = { $count ->
    [one] 1 seconde
   *[other] { $count } secondes
}
drawing-route = { $label } → étape { $to }
drawing-route-end = { $label } → fin
drawing-route-if = si { $conditions }
drawing-route-approve = approuvée
drawing-route-reject = refusée
drawing-done = Faite
drawing-skipped = Sautée
drawing-current = Étape en cours
drawing-ended-rejected = Refusée ici
drawing-ended-expired = Expirée ici
drawing-ended-cancelled = Annulée ici
drawing-end = Fin
drawing-end-state = Fin : { $state }
drawing-words-end = Puis la fin.
