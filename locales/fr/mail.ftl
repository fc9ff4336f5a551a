# Courriels des participants, rappels et échéances (issue 22).

state-expired = Expirée
event-emailed = Lien envoyé par courriel
event-reminded = Rappel envoyé par courriel
event-step-expired = Étape expirée ; suite
event-skipped = Passée : sa condition n'était pas remplie
event-closed-by-quorum = Close : assez d'approbations ; les autres n'étaient pas nécessaires
event-reassigned = Confié à un nouveau contact ; les anciens liens ne fonctionnent plus
event-reopened = Renvoyée pour modification : demandée à nouveau
event-expired = Expirée
doorway-expired = Cette demande a expiré avant d'avoir reçu sa réponse ; il n'y a plus rien à répondre.
actor-mail = courriel
actor-deadline = l'échéance de l'étape
actor-forward = transmis par { $participant }

contact-participant-unknown = « { $participant } » n'est pas un participant de ce workflow (ou figure deux fois). Ses participants : { $participants }.
contact-email-invalid = Saisissez une adresse électronique comme ada@example.org (au plus { $max } caractères).
contact-name-invalid = Un nom compte au plus { $max } caractères, sur une ligne.
contact-lang-invalid = Choisissez l'anglais (en) ou le français (fr).
link-no-address = { $participant } n'a pas d'adresse électronique dans cette instance : créez le lien et envoyez-le vous-même.

config-env-smtp-url = ORCHESTRA_SMTP_URL doit être une URL smtp:// ou smtps:// avec un hôte, comme smtp://127.0.0.1:2525 ou smtps://utilisateur:motdepasse@mail.example.org (sa valeur n'est pas répétée ici : elle peut contenir un mot de passe).
config-env-mail-from = ORCHESTRA_MAIL_FROM doit être une adresse, comme orchestra@example.org ou « Orchestra <orchestra@example.org> ».
config-env-smtp-half = Définissez à la fois ORCHESTRA_SMTP_URL et ORCHESTRA_MAIL_FROM pour envoyer des courriels, ou aucune des deux.

mail-link-subject = { $step } – { $subject }
mail-reminder-subject = Rappel : { $step } – { $subject }
mail-greeting = Bonjour { $name },
mail-greeting-anonymous = Bonjour,
mail-link-intro = { $site } vous demande de répondre à une étape de la demande « { $subject } » : { $step }.
mail-reminder-intro = { $site } attend toujours votre réponse à une étape de la demande « { $subject } » : { $step }. Voici un nouveau lien ; ceux que vous aviez fonctionnent toujours.
mail-link-action = Ouvrir votre étape
mail-link-expires = Ce lien fonctionne jusqu'au { $expires }.
mail-link-yours = Il n'est qu'à vous : quiconque le détient peut répondre à votre place, ne le transférez donc pas.
mail-footer = Vous recevez ce courriel parce que votre adresse a été donnée pour cette demande (« { $workflow } ») sur { $site }.

definition-remind = Ligne { $line } : écrivez un rappel ainsi : « remind 2d x3 » : une attente d'au moins 1h, puis au plus 10 rappels (x1 si rien n'est dit).
definition-expires = Ligne { $line } : écrivez une échéance ainsi : « expires 7d » ou « expires 7d then next » : au moins 1m, au plus 365d.

instance-contacts = Courriels des participants
instance-contacts-help = Chaque participant dont l'adresse est donnée reçoit son lien par courriel quand son étape commence, dans sa langue. Laissez une ligne vide pour envoyer le lien vous-même.
instance-contacts-none = Choisissez un workflow pour voir ses participants.
instance-contacts-show = Afficher ses participants
contact-email = Courriel
contact-name = Nom
contact-lang = Langue
instance-emails = Courriels
instance-emails-none = Aucun courriel pour cette instance pour l'instant.
instance-emails-more = Les { $count } plus récents sont affichés.
mail-kind-link = Lien
mail-kind-reminder = Rappel
mail-state-pending = En attente
mail-state-sent = Envoyé
mail-state-failed = Échec
mail-state-skipped = Plus nécessaire
mail-due = prévu { $at }
mail-tries = { $count ->
    [one] 1 essai
   *[other] { $count } essais
}
link-send = Envoyer par courriel
link-sent = Le lien sera envoyé par courriel d'ici quelques secondes ; l'historique indique quand il l'est.

status-mail = Courriel
status-mail-off = Aucun serveur SMTP n'est défini (ORCHESTRA_SMTP_URL, ORCHESTRA_MAIL_FROM), et des participants ont une adresse : leurs liens ne sont pas envoyés ; les courriels attendent.
status-mail-unset = Aucun serveur SMTP n'est défini ; aucun participant n'a encore d'adresse.
status-mail-ok = Les courriels passent par { $server } ; aucun n'attend.
status-mail-unreachable = Le serveur SMTP { $server } ne répond pas : les courriels attendent et partiront quand il sera de retour.
status-mail-waiting = Les courriels passent par { $server } ; le plus ancien en attente était prévu { $at }.
status-mail-failed = { $count ->
    [one] 1 courriel a échoué définitivement
   *[other] { $count } courriels ont échoué définitivement
} (voir les Courriels de chaque instance).

cli-arg-contact = L'adresse électronique d'un participant, comme legal=ada@example.org (une fois par participant) : son lien lui est envoyé quand son étape commence
cli-arg-contact-name = Le nom d'un participant dans ses courriels, comme legal=Ada
cli-arg-contact-lang = La langue d'un participant, en ou fr, comme legal=fr (en si rien n'est dit)
cli-arg-send = Envoyer le lien à l'adresse du participant (donnée au démarrage) plutôt que l'afficher ; il vit la durée par défaut du site
cli-contact-spelling = Écrivez un contact ainsi : PARTICIPANT=VALEUR, avec une adresse pour chaque participant nommé : { $value }
cli-contact-refused = { $participant } : { $reason }
api-send-ttl = Un lien envoyé par courriel vit la durée par défaut du site : omettez ttl_seconds avec "send": true.
config-env-smtp-plain = ORCHESTRA_SMTP_URL envoie un mot de passe en clair (smtp://) à une autre machine, où quiconque sur le chemin pourrait le lire : utilisez smtps://, ou ajoutez ?tls=required pour STARTTLS.
instance-started-emailed = L'instance a été démarrée. Chaque participant qui a une adresse reçoit son lien par courriel quand son étape commence ; la section Courriels ci-dessous les suit.
mail-closed-subject = Plus nécessaire : { $step } – { $subject }
mail-closed-intro = L'étape « { $step } » de la demande « { $subject } » sur { $site } a été close avec assez d'approbations : rien de plus n'est attendu de vous. Votre lien ne propose plus de décision.
mail-outcome-complete-subject = Approuvé : { $subject }
mail-outcome-complete-intro = La demande « { $subject } » sur { $site } est terminée : chaque étape a reçu sa réponse.
mail-outcome-rejected-subject = Refusé : { $subject }
mail-outcome-rejected-intro = La demande « { $subject } » sur { $site } a été refusée à l'étape « { $step } ».
mail-outcome-expired-subject = Expiré : { $subject }
mail-outcome-expired-intro = La demande « { $subject } » sur { $site } a pris fin : l'étape « { $step } » a dépassé son échéance sans réponse.
mail-outcome-cancelled-subject = Annulé : { $subject }
mail-outcome-cancelled-intro = La demande « { $subject } » sur { $site } a été annulée.
mail-outcome-comment = Le dernier commentaire
mail-outcome-answers = Ce que vous avez envoyé
mail-kind-closed = Plus nécessaire
mail-kind-outcome = Issue
# A moment in an email, in UTC: day, month, year, time (17:47).
mail-date = { $day ->
    [1] 1er
   *[other] { $day }
} { $month ->
    [1] janvier
    [2] février
    [3] mars
    [4] avril
    [5] mai
    [6] juin
    [7] juillet
    [8] août
    [9] septembre
    [10] octobre
    [11] novembre
   *[12] décembre
} { $year } à { $time } UTC
# The colon after a label ("Ouvrir votre étape :"), with its narrow no-break space.
mail-colon = { "\u202F:" }
# A start that gives addresses on a site with no SMTP server: its emails wait.
instance-started-unsent = L'instance a été démarrée. Aucun serveur SMTP n'est défini (ORCHESTRA_SMTP_URL, ORCHESTRA_MAIL_FROM) : les courriels des participants attendent et partiront dès qu'il le sera.
cli-mail-unsent = Attention : aucun serveur SMTP n'est défini (ORCHESTRA_SMTP_URL, ORCHESTRA_MAIL_FROM) ; les courriels des participants attendent et partiront dès qu'il le sera.

# Le code envoyé avant une étape « | verify email » : dans le corps, jamais dans l'objet.
mail-code-subject = Votre code pour { $site }
mail-code-intro = Voici votre code pour ouvrir votre étape de la demande « { $subject } » ({ $step }) :
mail-code-expires = Il est valable { $minutes ->
    [one] une minute
   *[other] { $minutes } minutes
}. Saisissez-le sur la page qui vous l'a demandé.
mail-code-ignore = Si vous ne l'avez pas demandé, ignorez ce courriel : personne ne peut ouvrir votre étape sans lui.
mail-kind-code = Code
instance-started-unverifiable = L'instance a été démarrée. Une étape demande à son participant un code envoyé à son adresse, et une personne qu'elle interroge n'en a pas : elle ne pourra pas y répondre tant qu'un administrateur n'aura pas confié l'étape à un contact avec une adresse.
cli-code-unverifiable = Attention : { $participant } doit saisir un code envoyé à son adresse avant l'étape { $step }, et n'a pas d'adresse dans cette instance : il ne pourra pas y répondre.
mail-outcome-receipts = Vos reçus sont joints (receipt-….jws) : chacun est signé par ce site et dit ce que vous avez répondu et quand. Tout le monde peut en vérifier un avec une bibliothèque JOSE et les clés publiques de ce site, à l’adresse /.well-known/jwks.json. Ils ne contiennent aucun lien.

## Courriels des administrateurs
mail-admin-footer = Vous recevez ce courriel parce que vous administrez { $site }, ou y avez été invité.
mail-admin-expires = Ce lien fonctionne une fois, jusqu'au { $expires }.
mail-admin-invite-subject = Vous êtes invité à administrer { $site }
mail-admin-invite-intro = Vous avez été invité à administrer { $site } sous le nom { $name }. Choisissez votre mot de passe pour commencer.
mail-admin-invite-action = Choisir mon mot de passe
mail-admin-reset-subject = Un nouveau mot de passe pour { $site }
mail-admin-reset-intro = Un lien pour choisir un nouveau mot de passe pour { $name } sur { $site } a été créé pour vous. Si vous ne l'avez pas demandé, prévenez un autre administrateur. Votre mot de passe reste tel quel.
mail-admin-reset-action = Choisir un nouveau mot de passe
mail-admin-password-subject = Votre mot de passe sur { $site } a été changé
mail-admin-password-intro = Le mot de passe de { $name } sur { $site } vient d'être changé, et toutes les autres sessions ont été déconnectées. Si ce n'était pas vous, demandez tout de suite à un autre administrateur de désactiver votre compte et de réinitialiser son mot de passe.
mail-admin-two-step-on-subject = La connexion en deux étapes est activée sur { $site }
mail-admin-two-step-on-intro = La connexion en deux étapes vient d'être activée pour { $name } sur { $site }. Se connecter demande désormais un code après le mot de passe. Si ce n'était pas vous, prévenez tout de suite un autre administrateur.
mail-admin-two-step-off-subject = La connexion en deux étapes est désactivée sur { $site }
mail-admin-two-step-off-intro = La connexion en deux étapes vient d'être désactivée pour { $name } sur { $site }. Le mot de passe seul suffit de nouveau pour se connecter. Si ce n'était pas vous, prévenez tout de suite un autre administrateur.
