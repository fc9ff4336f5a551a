# Issue 22 : la boîte d'envoi et les webhooks (docs/delivery.md).
cli-about-webhook = Points de réception des webhooks : webhook create URL, list, delete ID, enable ID, disable ID, retry ID
cli-about-webhook-create = Ajouter un point de réception ; affiche son secret de signature une seule fois
cli-arg-webhook-url = Où les messages sont envoyés (https ; http et adresses privées seulement avec ORCHESTRA_WEBHOOKS_ALLOW_PRIVATE=1)
cli-arg-webhook-events = Les événements qu'il reçoit, séparés par des virgules (tous s'il est omis)
cli-about-webhook-list = Lister les points de réception : numéro, URL, événements, état, échecs consécutifs, le jeton d'API qui l'a enregistré (- pour un administrateur)
cli-about-webhook-delete = Supprimer un point de réception
cli-arg-webhook-id = Le numéro du point de réception, tel que webhook list l'affiche
cli-webhook-created = Point de réception { $id } créé : son secret de signature est affiché ci-dessus, cette seule fois.
cli-webhook-deleted = Point de réception { $id } supprimé.
cli-about-webhook-enable = Réactiver un point de réception désactivé, sa série d’échecs oubliée
cli-webhook-enabled = Point de réception { $id } réactivé : { $count } messages en attente partent maintenant, et les nouveaux messages lui sont de nouveau destinés.
cli-about-webhook-disable = Désactiver un point de réception : plus rien ne lui est envoyé, et ses messages attendent qu'il soit réactivé
cli-webhook-disabled = Point de réception { $id } désactivé : ses messages attendent qu'il soit réactivé.
cli-about-webhook-retry = Envoyer tout de suite ce qui attend un point de réception (messages prévus plus tard, échoués ou mis de côté), chacun avec un nouveau calendrier d'essais
cli-webhook-retried = Point de réception { $id } : { $count } messages partent maintenant.
cli-webhook-retried-disabled = Le point de réception { $id } est désactivé : ce qui l'attend part dès qu'il est réactivé (webhook enable { $id }).
cli-webhook-unknown = Aucun point de réception { $id }.
webhook-url-invalid = Cette URL ne peut pas recevoir de webhook (une URL http ou https, sans nom d'utilisateur ni mot de passe).
webhook-url-not-https = L'URL d'un webhook doit commencer par https://.
webhook-url-private = Cette adresse est dans le réseau du serveur (boucle locale, privée, lien local ou métadonnées) : aucun webhook n'y est envoyé.
webhook-url-unresolved = Le nom d'hôte de l'URL ne se résout pas.
webhook-event-unknown = Événement inconnu { $event }. Événements : { $events }.
webhook-too-many = Ce jeton a { $cap } points de réception, autant qu'il en a le droit : supprimez-en un d'abord.
status-webhooks = Webhooks
status-webhooks-value = { $total ->
    [one] 1 point de réception
   *[other] { $total } points de réception
}, { $disabled ->
    [one] 1 désactivé
   *[other] { $disabled } désactivés
}
status-webhooks-disabled-description = Un point de réception est désactivé quand un message a échoué à chaque essai d'environ trois jours sans que rien ne soit accepté entre-temps ; ses messages attendent. Voir son journal des envois sur la page Webhooks, puis le réactiver une fois son récepteur réparé : ce qui attendait part alors.
status-webhooks-late = Des envois attendent au-delà de leur heure : le plus ancien était prévu { $at }. L'expéditeur du serveur (ou orchestra cron) tourne-t-il ?
