## Pages d'administration.

login-title = Connexion
login-submit = Se connecter
login-failed = Nom inconnu ou mot de passe erroné.

setup-title = Créer le premier administrateur
setup-intro = Cette page à usage unique crée le premier administrateur du site. Choisissez un nom et un mot de passe d'au moins 10 caractères.
setup-submit = Créer et se connecter
setup-done = Bienvenue. Vous êtes connecté en tant que premier administrateur du site.
admin-name-invalid = Utilisez de 1 à 60 lettres, chiffres, points, tirets, tirets bas ou @.
admin-password-short = Utilisez au moins { $min } caractères.
admin-password-long = Ce mot de passe est trop long.
admin-password-mismatch = Les deux mots de passe diffèrent.

dashboard-title = Tableau de bord
dashboard-attention = À surveiller
dashboard-site-state = Le site
dashboard-see-status = Voir le rapport d'état
dashboard-start = Pour commencer
dashboard-workflow-count = Processus :
dashboard-recent = Instances récentes
dashboard-no-instances = Aucune instance n'a encore été démarrée.
first-steps-title = Pour bien démarrer
first-steps-intro = Quelques étapes pour préparer ce site pour les personnes avec qui vous travaillez. Suivez-les dans l'ordre ; chacune mène à la page où elle se fait.
first-steps-report = Voir le rapport d'état complet
first-step-done = Fait
first-step-todo = À faire
first-step-site = Indiquer l'adresse et le nom du site
first-step-site-help = L'adresse est celle que les personnes ouvriront depuis leurs courriels, par exemple https://formulaires.example.org.
first-step-mail = Indiquer un serveur de courriel
first-step-mail-help = Pour que les personnes reçoivent leurs liens par courriel. La personne qui gère le serveur l'indique en le démarrant (voir le guide d'exploitation).
first-step-workflow = Consulter un processus, ou en modifier un
first-step-workflow-help = Un processus est la suite d'étapes que suit une demande, avec qui répond à chacune. Les exemples montrent comment ils fonctionnent.
first-step-instance = Démarrer une première instance
first-step-instance-help = Une instance est une demande qui suit un processus, par exemple une commande ou un contrat.
first-step-admin = Inviter un autre administrateur
first-step-admin-help = Quelqu'un qui peut prendre le relais en votre absence.

workflows-title = Processus
workflow-new = Nouveau processus
workflow-edit = Modifier le processus
workflow-label = Libellé
workflow-name = Nom machine
workflow-name-help = Lettres minuscules, chiffres et tirets bas ; utilisé par la ligne de commande. Il ne peut plus changer ensuite.
workflow-steps = Étapes
workflow-definition = Étapes, une par ligne
workflow-preview = Aperçu
workflow-preview-help = Chaque étape telle que la verra la personne qui y répond, d'après la définition saisie ci-dessus. Rien n'est enregistré tant que vous n'appuyez pas sur Enregistrer.
workflow-definition-help = Chaque ligne est une étape : son type, d'éventuelles branches parallèles entre crochets, deux-points, son titre, puis les détails après une barre.
kind-form-help = un formulaire que remplit la personne extérieure ; * marque un champ obligatoire ; les types de champ sont { $types }
kind-review-help = approuver ou refuser avec un commentaire ; ici deux relecteurs répondent en parallèle
kind-payment-help = le payeur passe par le prestataire de paiement puis revient
kind-form = Formulaire
kind-review = Relecture
kind-payment = Paiement
workflow-saved = Le processus a été enregistré.
workflow-name-invalid = Utilisez de 1 à 64 lettres minuscules, chiffres ou tirets bas.
workflow-name-taken = Un autre processus a déjà ce nom machine.
workflow-label-invalid = Saisissez un libellé de 1 à 100 caractères.
workflow-label-in-en = Libellé en anglais
workflow-label-in-fr = Libellé en français
workflow-label-in-help = Facultatif : ce que voient les personnes qui lisent cette langue ; le libellé ci-dessus sinon.
workflow-label-other-invalid = Saisissez au plus 100 caractères, sur une ligne (ou laissez vide).
definition-no-colon = Ligne { $line } : mettez deux-points après le type, comme dans « review: Vérifier la commande ».
definition-branches = Ligne { $line } : fermez la liste des branches par ], comme dans review[legal,finance].
definition-branch-name = Ligne { $line } : les noms de branche utilisent des minuscules, des chiffres et des tirets bas (32 au plus).
definition-branch-twice = Ligne { $line } : une branche est nommée deux fois.
definition-title = Ligne { $line } : donnez à l'étape un titre de 200 caractères au plus.
definition-kind = Ligne { $line } : type inconnu ; utilisez form, review ou payment.
definition-amount = Ligne { $line } : écrivez le montant et la devise après une barre, comme dans « | 49.90 EUR ».
definition-field = Ligne { $line } : le champ « { $field } » est mal formé ; écrivez-le Libellé, Libellé* ou Libellé* (email).
definition-field-kind = Ligne { $line } : le champ « { $field } » a le type « { $kind } », qui n'existe pas ; utilisez { $allowed }.
definition-field-twice = Ligne { $line } : le champ « { $field } » est nommé deux fois ; donnez à chaque champ d'un formulaire son propre libellé.
definition-no-fields = Ligne { $line } : un formulaire demande au moins un champ après une barre.
definition-empty = Écrivez au moins une étape.
definition-too-long = Un processus compte { $max } étapes au plus.

instances-title = Instances
instance-new = Démarrer une instance
instance-start = Démarrer
instance-started = L'instance a été démarrée. Émettez un lien ci-dessous pour l'envoyer à quelqu'un.
instance-subject = Objet
instance-subject-title = Titre de l'objet
instance-subject-body = Texte de l'objet (le document à relire, la commande à payer…)
instance-workflow = Processus
instance-state = État
instance-erased = Effacée le { $at } : les réponses, les fichiers et les contacts ne sont plus gardés ; les étapes, les dates et les empreintes des réponses, si.
instance-updated = Dernier changement
instance-current-step = Étape en cours
instance-title-invalid = Saisissez un titre de 1 à { $max } caractères.
instance-workflow-unknown = Choisissez un processus.
instance-links = Liens
instance-branch = Branche
instance-no-branch = (aucune branche)
instance-ttl = Durée de vie
instance-ttl-help = En secondes, ou avec une unité : 30m, 12h, 7d.
instance-issue = Émettre un lien
instance-link-issued = Copiez ce lien et envoyez-le à la personne qui doit répondre. Il n'est affiché qu'une fois.
instance-link-issued-help = Quiconque détient ce lien peut répondre à l'étape, jusqu'à son expiration ou la révocation des liens.
instance-revoke = Révoquer tous les liens
instance-revoke-help = Tous les liens et jetons émis pour cette instance cessent aussitôt de fonctionner.
instance-revoked = Tous les liens de cette instance ont été révoqués.
instance-cancel = Annuler cette instance
instance-cancel-help = Y met fin tout de suite : tous les liens et retours de paiement cessent de fonctionner, un paiement en cours est clos, et plus rien ne peut être répondu.
instance-cancelled = L'instance a été annulée.
handover-title = Confier à quelqu'un d'autre
handover-help = Confiez un participant qui a encore quelque chose à répondre à une autre personne : ses anciens liens cessent aussitôt de fonctionner, et le nouveau contact reçoit son lien par e-mail quand l'étape est la sienne.
handover-submit = Confier
instance-handed-over = Le participant a été confié au nouveau contact. Ses anciens liens ne fonctionnent plus.
instance-cancel-title = Annuler #{ $id } { $title } ?
instance-cancel-explain = L'instance prend fin maintenant, comme annulée, et ne pourra pas reprendre. Tous les liens et retours de paiement émis pour elle cessent aussitôt de fonctionner ; un paiement en cours est clos, et un avis ultérieur du prestataire n'y change rien. L'historique garde qui l'a annulée et pourquoi.
instance-cancel-reason = Motif (facultatif ; gardé dans l'historique)
instance-cancel-ended = Cette instance est déjà terminée ; il n'y a rien à annuler.
instance-cancel-reason-long = Le motif fait au plus { $max } caractères.
history-reason = Motif
history-erased = Effacée (durée de conservation ou demande d'effacement) : les mots ne sont plus gardés ; l'empreinte de la réponse, si.
history-to = Confié à
# Le deux-points après un libellé (« Décision : Approuvé »), précédé d'une espace fine insécable.
label-colon = {"\u202F"}:
instance-cancel-keep = La laisser continuer
instance-cancel-back = Retour à l'instance
instance-files = Fichiers
instance-file-name = Fichier
instance-file-size = Taille
instance-file-kind = Type
instance-history = Historique
history-when = Quand
history-step = Étape
history-branch = Branche
history-event = Événement
history-answer = Réponse
event-started = Démarrée
event-answered = Réponse reçue
event-link-issued = Lien émis
event-links-revoked = Liens révoqués
event-complete = Terminée
event-rejected = Refusée
event-cancelled = Annulée
link-instance-unknown = Aucune instance { $id }.
link-branch-unknown = Ce processus n'a pas de branche nommée { $branch }.
link-ttl-invalid = Saisissez une durée de vie de { $min } secondes à { $max } secondes (par exemple 3600, 30m, 12h ou 7d).

settings-title = Réglages d'Orchestra
settings-site-name = Nom du site
settings-base-url = URL de base
settings-base-url-help = L'adresse par laquelle on atteint ce site ; chaque lien est construit dessus.
settings-link-ttl = Durée de vie par défaut des liens (secondes)
settings-link-ttl-help = De 60 secondes à un an, en secondes ou sous la forme 30m, 12h, 7d. 604800 (7d) fait une semaine.
settings-retention-days = Conserver les réponses des instances terminées (jours)
settings-retention-days-help = Jours après la fin d’une instance avant que cron n’efface ses réponses, ses fichiers et ses contacts (ses étapes, ses dates et les empreintes des réponses restent). 0 les garde pour toujours. La ligne keep: d’un workflow l’emporte.
settings-request-limits = Limites de requêtes
settings-request-limits-help = Plafonne le nombre de requêtes auxquelles les adresses publiques, comme la porte d'interaction, répondent sur une période glissante. Les limites elles-mêmes se règlent par adresse.
settings-limits-enabled = Compter et limiter les requêtes
settings-limits-period = Période (secondes)
settings-limits-period-help = La fenêtre glissante sur laquelle chaque limite est comptée, de 1 seconde à 604800 (une semaine). 3600 fait une heure.
settings-interaction-link = Régler les limites de la porte d'interaction
settings-saved = Les réglages ont été enregistrés.
limits-state-counting = Les requêtes de la porte sont comptées et limitées.
limits-state-not-counting = Rien ne limite la porte d'interaction : l'interrupteur est allumé, mais les deux limites valent 0.
interaction-title = Réglages d'interaction
interaction-intro = Les limites de la porte d'interaction, l'adresse qui répond aux liens de capacité sans savoir qui appelle. Chaque requête est comptée avant tout travail, que le lien soit bon ou non.
interaction-per-link = Requêtes par lien
interaction-per-link-help = Combien de requêtes un lien ou un jeton de retour peut faire par période. Laissez de la marge pour une personne qui recharge la page et pour les retours d'un prestataire de paiement. 0 désactive cette limite.
interaction-total = Requêtes au total
interaction-total-help = Combien de requêtes tous les liens ensemble peuvent faire par période. Placez-la bien au-dessus d'une journée chargée : une fois atteinte, la porte refuse tout le monde jusqu'à ce que la période avance. 0 désactive cette limite.
interaction-period-note = Période en secondes, réglée dans la section Limites de requêtes :
interaction-switch-off = L'interrupteur des limites de requêtes est éteint : ces nombres sont conservés, mais rien n'est compté.
interaction-switch-link = L'allumer dans la section Limites de requêtes.

status-title = Rapport d'état
status-check = Vérification
status-value = Valeur
status-severity = Gravité
status-database = Base de données
status-database-ok = { $backend }, joignable
status-database-down = { $backend }, injoignable
status-keys = Clés du site
status-keys-present = Présentes, créées le { $date }
status-keys-missing = Absentes
status-keys-missing-description = Les liens ne peuvent être ni signés ni vérifiés. Redémarrez le serveur pour créer les clés.
status-cron = Dernière exécution du cron
status-cron-ran = { $date }
status-cron-never = Jamais
status-retention = Conservation des données des instances terminées
status-retention-forever = Gardées pour toujours (records.retention_days vaut 0)
status-retention-days = Effacées { $days ->
    [one] { $days } jour
   *[other] { $days } jours
  } après la fin d'une instance
status-retention-description = { $workflows ->
    [none] Aucun workflow n'a sa propre ligne keep:.
   *[other] Workflows ayant leur propre ligne keep: (jours, 0 pour toujours) : { $workflows }.
  }
  { $ran ->
    [yes] Le dernier effacement du cron a effacé { $count ->
        [one] { $count } instance
       *[other] { $count } instances
    } le { $date }
   *[no] Cron n'a pas encore lancé l'effacement.
  }
status-cron-stale-description = Le cron supprime les sessions, jetons et compteurs expirés. Le serveur le lance toutes les dix minutes ; sans serveur, planifiez « orchestra cron ».
status-version = Version
status-version-value = Orchestra { $version }
status-doorway = Limites de requêtes de la porte d'interaction
status-doorway-on = { $per_link ->
    [0] pas de limite par lien
   *[other] { $per_link } par lien
  }, { $total ->
    [0] pas de limite totale
   *[other] { $total } au total
  }, par période de { $period ->
        [one] { $period } seconde
       *[other] { $period } secondes
    } (compteur : { $backend })
status-doorway-on-description = Chaque requête vers la porte est comptée avant tout travail ; une requête refusée reçoit une simple réponse 429.
status-doorway-off-switch = Rien ne limite la porte : l'interrupteur des limites de requêtes est éteint.
status-doorway-off-switch-description = N'importe qui peut faire vérifier des liens au site aussi vite qu'il envoie des requêtes. Activez « Compter et limiter les requêtes » dans Réglages › Limites de requêtes et réglez les deux limites dans Réglages d'interaction, ou lancez : { $fix }
status-doorway-off-zero = Rien ne limite la porte : les deux limites valent 0.
status-doorway-off-zero-description = L'interrupteur est allumé, mais une limite de 0 désactive son palier. Réglez les requêtes par lien et au total dans Réglages d'interaction, ou lancez : { $fix }

status-line = [{ $severity }] { $title } : { $value }

# Issue 8: versions, participants, link records
action-cancel = Annuler
workflow-open = Ouvrir le workflow { $label }
workflow-current-version = Version actuelle
workflow-participants = Participants
workflow-participants-help = Écrivez @nom après le type pour dire qui répond à une étape (form@supplier). Les étapes qui ne nomment personne vont au participant « default ». Les branches parallèles [legal,finance] sont les participants d'une même étape.
workflow-options-help = Les options suivent l'étape sur sa ligne, chacune après une barre ; la liste complète est dans docs/workflows.md.
workflow-requests = Le lien d'un participant de ce workflow fait jusqu'à { $requests ->
    [one] { $requests } requête
   *[other] { $requests } requêtes
  } à la porte d'interaction, chaque tour compté.
workflow-requests-limit = Le lien d'un participant de ce workflow fait jusqu'à { $requests ->
    [one] { $requests } requête
   *[other] { $requests } requêtes
  } à la porte d'interaction, chaque tour compté ; la limite par lien est { $limit }.
workflow-requests-over = Le lien d'un participant de ce workflow peut faire jusqu'à { $requests ->
    [one] { $requests } requête
   *[other] { $requests } requêtes
  } à la porte d'interaction, chaque tour compté, plus que la limite par lien de { $limit } : quelqu'un qui répond à chaque tour serait refusé. Relevez la limite sur la page des réglages d'interaction.
workflow-versions = Versions
workflow-versions-help = Chaque enregistrement crée une nouvelle version. Une instance en cours reste sur la version où elle a commencé jusqu'à sa fin ; les nouvelles instances démarrent sur la plus récente.
workflow-version = Version
workflow-version-created = Enregistrée
workflow-version-running = Instances en cours
workflow-version-ended = Instances terminées
workflow-version-newest = la plus récente
workflow-version-delete = Supprimer la version { $number }
workflow-edit-named = Modifier { $label }
workflow-delete-named = Supprimer { $label }
workflow-save-makes-version = Vous modifiez la version { $version }. Enregistrer une définition modifiée crée une nouvelle version ; { $running ->
    [0] aucune instance n'est en cours.
    [one] l'instance en cours reste sur sa version.
   *[other] les { $running } instances en cours restent sur leur version.
}
workflow-delete-explain = Le workflow disparaît des listes et aucune nouvelle instance ne peut démarrer dessus. Les instances terminées gardent leur historique. C'est définitif.
workflow-delete-confirm = Supprimer le workflow
workflow-delete-running = Ce workflow ne peut pas être supprimé : { $running ->
    [one] une instance est encore en cours dessus.
   *[other] { $running } instances sont encore en cours dessus.
} Attendez qu'elles se terminent.
workflow-deleted = Le workflow a été supprimé.
workflow-version-delete-title = Supprimer la version { $number } de { $label }
workflow-version-delete-explain = La version disparaît de la page du workflow. Les instances terminées sur cette version gardent leur historique.
workflow-version-delete-running = Cette version ne peut pas être supprimée : { $running ->
    [one] une instance est encore en cours dessus.
   *[other] { $running } instances sont encore en cours dessus.
}
workflow-version-delete-last = La version la plus récente ne peut pas être supprimée : un workflow en garde au moins une.
workflow-version-deleted = La version a été supprimée.
instance-version = version
instance-participant = Participant
instance-nothing-to-issue = Aucun participant n'a plus rien à répondre : aucun lien ne peut être émis.
link-issued = Émis
link-expires = Expire
link-state = État
link-state-active = Actif
link-state-expired = Expiré
link-state-revoked = Révoqué
link-state-used-up = Épuisé
instance-link-revoke = Révoquer le lien de { $participant }
instance-link-revoked = Le lien a été révoqué.
instance-revoke-title = Révoquer tous les liens de #{ $id } { $title } ?
instance-revoke-explain = Tous les liens et retours de paiement émis pour cette instance cessent de fonctionner immédiatement, y compris ceux qu'un participant utilise en ce moment. Vous pourrez émettre de nouveaux liens ensuite.
history-participant = Participant
event-link-revoked = Lien révoqué
actor-cli = ligne de commande
history-decision = Décision
history-decision-approve = Approuvé
history-decision-reject = Refusé
history-comment = Commentaire
history-payment = Paiement
history-paid = Payé
link-instance-over = Cette instance est terminée : il n'y a plus rien à répondre.
link-participant-unknown = « { $participant } » n'est pas un participant de la version du workflow de cette instance (participants : { $participants }).
link-participant-missing = Indiquez le participant à qui le lien est destiné : { $participants }.
link-participant-done = { $participant } n'a plus rien à répondre dans cette instance.
definition-participant = Ligne { $line } : un participant après @ s'écrit en minuscules, chiffres et _ (par exemple form@supplier).
definition-participant-and-branches = Ligne { $line } : une étape a soit un participant (@nom), soit des branches parallèles ([a,b]), pas les deux.
status-notice = Limites des avis de paiement
status-notice-on = { $per_payment } par paiement et { $total } au total toutes les { $period } s (stockage : { $backend })
status-notice-off-switch = Désactivées : l'interrupteur général est coupé
status-notice-off-zero = Désactivées : les deux limites des avis valent 0
status-notice-off-period = Désactivées : la période vaut 0 seconde
status-notice-off-switch-description = Rien ne limite les avis du prestataire de paiement (POST /notice/test-provider) : l'interrupteur des limites de requêtes est éteint. Activez « Compter et limiter les requêtes » dans Réglages › Limites de requêtes, ou lancez : { $fix }
status-notice-off-description = Rien ne limite les avis du prestataire de paiement (POST /notice/test-provider). Réglez-les sous Réglages › Réglages d'interaction, ou lancez : { $fix }
status-provider = Prestataire de paiement
status-provider-test = Prestataire de test (aucun argent ne circule)
status-provider-test-description = Les paiements passent par le prestataire de test intégré. Désactivez-le avec : orchestra config set orchestra.test_provider false
status-provider-test-public-description = Ce site est public (https) et ses paiements passent par le prestataire de test intégré : les payeurs croiraient avoir payé. Désactivez-le avec : orchestra config set orchestra.test_provider false
status-provider-off = Désactivé
notices-title = Avis de paiement
notices-intro = Le prestataire de paiement confirme chaque paiement par un avis signé envoyé à POST /notice/test-provider. Ces limites comptent ces avis avec la même garde que la porte, sous le même interrupteur et la même période. 0 désactive une limite.
notices-per-payment = Avis par paiement et par période
notices-per-payment-help = Un prestataire envoie un avis par paiement, et le renvoie quelques fois sans réponse : 10 suffit largement.
notices-total = Avis par période, tous paiements confondus
notices-total-help = Dimensionnez-la d'après les paiements attendus sur une période, multipliés par la limite par paiement.
notices-test-provider = Recevoir les paiements par le prestataire de test intégré
notices-test-provider-help = Activé d'origine, pour que les exemples puissent être payés. Aucun argent ne circule : désactivez-le sur un site public.
notices-state-counting = Les avis sont comptés et limités.
notices-state-report-only = Les avis sont comptés en mode observation : aucun n'est refusé, et le rapport d'état montre lesquels l'auraient été.
notices-state-switch-off = Les avis ne sont pas comptés : l'interrupteur des limites de requêtes est éteint, ces nombres sont conservés mais rien n'est compté.
notices-state-period-zero = Les avis ne sont pas comptés : la période vaut 0 seconde.
notices-state-not-counting = Les avis ne sont pas comptés : l'interrupteur est allumé, mais les deux limites valent 0.
notices-state-per-payment-only = Les avis de chaque paiement sont limités, mais le total est désactivé : les avis de nombreux paiements ne sont pas limités.
notices-state-total-only = Le total des avis est limité, mais pas ceux de chaque paiement : les avis d'un seul paiement peuvent épuiser tout le total.
# Issue 9
settings-login-limits = Tentatives de connexion
settings-login-limits-help = Décidées avant toute vérification de mot de passe, quel que soit l'interrupteur ci-dessus ; une tentative refusée n'est pas vérifiée du tout et ne compte nulle part. Les tentatives de chaque adresse sont comptées ; pour un compte existant, ses échecs, depuis chaque adresse et depuis toutes ensemble, si bien que les essais d'une adresse ne bloquent que cette adresse. Une connexion réussie ne compte rien pour le compte. 0 désactive une limite. La limite par adresse compte aussi les requêtes d'API portant un jeton que ce site ne connaît pas (docs/api.md).
settings-login-per-address = Tentatives par adresse de client
settings-login-address-period = Par adresse, sur (secondes)
settings-login-per-account = Échecs par compte depuis une même adresse
settings-login-account-total = Échecs par compte depuis toutes les adresses
settings-login-account-period = Par compte, sur (secondes)
status-check-failed = Impossible à vérifier : la base de données ne peut pas être lue
status-database-vanished = { $backend }, le fichier a été supprimé ou remplacé
status-database-vanished-description = Le serveur refuse toute écriture pour que rien ne se perde dans un fichier supprimé. Remettez la base en place (depuis une sauvegarde au besoin) et redémarrez le serveur.
status-database-locked = { $backend }, verrouillée en écriture
status-database-locked-description = Un autre processus détient le verrou d'écriture de la base : toute écriture (réponses, connexions, réglages) l'attend puis échoue avec une erreur 503, tandis que les pages qui ne font que lire continuent de répondre. Trouvez ce qui le détient (une sauvegarde, un shell sqlite3 resté dans une transaction) et arrêtez-le.
status-database-read-only = { $backend }, en lecture seule
status-database-read-only-description = La base peut être lue mais pas écrite : toute écriture (réponses, connexions, réglages) échoue avec une erreur 503. Donnez à l'utilisateur du serveur le droit d'écrire le fichier de la base et son répertoire (SQLite), ou faites-le pointer vers le serveur principal (PostgreSQL).
status-database-not-set-up = { $backend }, non préparée
status-login = Limites de connexion
status-login-on = { $per_address ->
        [one] { $per_address } tentative
       *[other] { $per_address } tentatives
    } par adresse toutes les { $address_period } s ; { $per_account ->
        [one] { $per_account } échec
       *[other] { $per_account } échecs
    } par compte et adresse, { $account_total } par compte, toutes les { $account_period } s
status-login-off = Rien ne limite les tentatives de connexion : toutes les limites valent 0.
status-login-off-description = N'importe qui peut essayer des mots de passe aussi vite que le serveur les vérifie. Réglez-les dans Réglages › Limites de requêtes, ou : orchestra config set login.limits.per_account 5
status-proxies = Adresses des clients
status-proxies-none = Prises de la connexion ; aucun proxy n'est de confiance
status-proxies-named = Lues dans { $header } seulement, tel que l'écrivent { $count ->
        [one] { $count } adresse ou plage de proxys de confiance
       *[other] { $count } adresses ou plages de proxys de confiance
    }
status-proxies-ignored = Des en-têtes transmis arrivent, mais aucun proxy n'est de confiance
status-proxies-ignored-description = Chaque visiteur derrière le proxy compte comme l'adresse du proxy : les tentatives de connexion de l'un peuvent bloquer les autres. Réglez ORCHESTRA_TRUSTED_PROXIES sur l'adresse du proxy (voir docs/operations.md).
definition-too-large = Une définition de workflow fait au plus { $max } caractères.
definition-too-many-fields = Ligne { $line } : un formulaire a au plus { $max } champs.
actor-api = jeton d'API { $token }

# Issue 12: API tokens
tokens-title = Jetons d'API
tokens-intro = Les programmes qui démarrent des instances et émettent des liens appellent l'API (/api/v1/) avec un jeton. Chaque jeton a son propre seau : un débit par minute et une rafale, et une portée : ce qu'il peut faire, sur quelles instances et quels workflows. Voir docs/api.md.
token-name = Nom
token-rate = Requêtes par minute
token-burst = Rafale
token-last-used = Dernière utilisation
token-state = État
token-active = Actif
token-revoked = Révoqué
token-never-used = Jamais
token-revoke = Révoquer le jeton { $name }
token-revoke-explain = Les programmes qui utilisent ce jeton reçoivent 401 immédiatement. C'est définitif : créez-leur un nouveau jeton.
token-revoked-flash = Le jeton a été révoqué.
token-new = Nouveau jeton
token-create = Créer le jeton
token-created = Le jeton a été créé.
token-created-label = Le nouveau jeton, affiché cette seule fois
token-created-help = Copiez-le maintenant dans le programme qui l'utilisera : il n'est gardé que sous forme de hachage à clé et ne peut plus être affiché.
token-name-help = Minuscules, chiffres, - et _ ; le nom qu'utilisent la ligne de commande et cette liste.
token-name-invalid = Utilisez 1 à 64 minuscules, chiffres, - ou _.
token-name-taken = Un jeton porte déjà ce nom.
token-rate-help = Laissez vide pour la valeur par défaut du site (Réglages › Limites de requêtes).
token-burst-help = Le plus de requêtes à la fois. Laissez vide pour la valeur par défaut du site.
token-default-note = * la valeur par défaut du site.
nav-api-tokens = Jetons d'API
instance-link-issued-flash = Un lien a été émis. Il est affiché ci-dessous, cette fois seulement.
settings-tabs-label = Sections des réglages
status-doorway-off-period = Rien ne limite la porte : la période vaut 0 seconde.
status-doorway-no-total-description = Chaque lien est limité, mais il n'y a pas de total : un afflux de liens neufs n'est pas limité. Réglez un total dans Réglages d'interaction, ou lancez : { $fix }
status-doorway-no-per-link-description = Seul le total est limité : un seul lien peut l'épuiser et bloquer tout le monde jusqu'à la fin de la période. Réglez une limite par lien dans Réglages d'interaction, ou lancez : { $fix }
limits-state-switch-off = Rien ne limite la porte d'interaction : l'interrupteur est éteint, les limites sont gardées mais rien n'est compté.
limits-state-period-zero = Rien ne limite la porte d'interaction : la période vaut 0 seconde.
limits-state-per-link-only = Chaque lien est limité, mais le total est désactivé : un afflux de liens neufs n'est pas limité.
limits-state-total-only = Le total est limité, mais pas chaque lien : un seul lien peut épuiser tout le total.
limits-fix-intro = Pour compter avec les deux limites, lancez :
limits-requests-help = Une visite sur un lien prend deux requêtes par étape : la page, puis la réponse. Un formulaire puis un paiement sur un lien font 4 requêtes (afficher le formulaire, l'envoyer, afficher l'étape de paiement, Payer) ; le retour du prestataire de paiement revient sur son propre identifiant, compté à part. Une limite par lien inférieure à 4 refuse Payer ; les processus d'exemple suggèrent { $suggested } par lien, de quoi recharger et réessayer.
status-summary = { $errors ->
    [one] { $errors } erreur
   *[other] { $errors } erreurs
  }, { $warnings ->
    [one] { $warnings } avertissement
   *[other] { $warnings } avertissements
  }, { $notes ->
    [one] { $notes } note
   *[other] { $notes } notes
  }
status-fix-link = Corriger dans { $form }
status-form-settings = Réglages d'Orchestra
status-form-interaction = Réglages d'interaction
status-form-login = Réglages › Limites de connexion
dashboard-see-check = Ouvrir { $title } dans le rapport d'état

## Report-only mode (issue 10)
limits-report-only = Observer seulement : compter, et noter ce que ces limites refuseraient, mais répondre à tous
limits-report-only-help = Pour dimensionner les limites sur le trafic réel : le rapport d'état montre combien de requêtes chaque limite aurait refusées. Décochez pour appliquer les limites ; les comptes sont conservés.
limits-state-report-only = Comptage en mode observation : personne n'est refusé, et le rapport d'état montre qui l'aurait été.
status-doorway-report-only = Observation seulement : { $per_link } par lien et { $total } au total toutes les { $period } s sont comptées, mais personne n'est refusé (stockage des compteurs : { $backend })
status-doorway-would-refuse = Auraient été refusées, par lien : { $first_now } cette période, { $first_recent } { $periods ->
        [one] sur la dernière période
       *[other] sur les { $periods } dernières périodes
    } ; au total : { $second_now } cette période, { $second_recent } { $periods ->
        [one] sur la dernière période
       *[other] sur les { $periods } dernières périodes
    }. Décochez « Observer seulement » dans les réglages d'interaction (/admin/config/orchestra/interaction) pour appliquer les limites, ou : orchestra config set interaction.limits.report_only false
status-notice-report-only = Observation seulement : { $per_payment } par paiement et { $total } au total toutes les { $period } s sont comptées, mais personne n'est refusé (stockage des compteurs : { $backend })
status-notice-would-refuse = Auraient été refusées, par paiement : { $first_now } cette période, { $first_recent } { $periods ->
        [one] sur la dernière période
       *[other] sur les { $periods } dernières périodes
    } ; au total : { $second_now } cette période, { $second_recent } { $periods ->
        [one] sur la dernière période
       *[other] sur les { $periods } dernières périodes
    }. Pour appliquer les limites : orchestra config set notice.limits.report_only false
status-login-report-only = Observation seulement : { $per_address ->
        [one] { $per_address } tentative
       *[other] { $per_address } tentatives
    } par adresse toutes les { $address_period } s, et { $per_account ->
        [one] { $per_account } échec
       *[other] { $per_account } échecs
    } par compte et adresse et { $account_total } par compte toutes les { $account_period } s sont comptés, mais personne n'est refusé
status-login-would-refuse = Auraient été refusées, par adresse : { $first_now } cette période, { $first_recent } { $periods ->
        [one] sur la dernière période
       *[other] sur les { $periods } dernières périodes
    } ; par compte et adresse : { $second_now } cette période, { $second_recent } { $periods ->
        [one] sur la dernière période
       *[other] sur les { $periods } dernières périodes
    }. Pour appliquer les limites : orchestra config set login.limits.report_only false
status-would-refuse-elsewhere = Seul un serveur en marche sait combien de requêtes auraient été refusées : voyez son rapport d'état (/admin/reports/status).

## Store faults (issue 10)
settings-on-store-fault = Tant que les compteurs partagés sont injoignables
settings-on-store-fault-count = Compter dans ce serveur jusqu'à son retour (par défaut)
settings-on-store-fault-allow = Laisser passer toutes les requêtes
settings-on-store-fault-refuse = Refuser toute requête comptée
settings-on-store-fault-help = Les compteurs sont gardés dans la base de données, partagés par tous les serveurs. Tant qu’elle est injoignable, chaque serveur peut compter seul, répondre à tous, ou refuser tout le monde. Les connexions suivent aussi ce choix.
status-flood-store = Stockage des compteurs
status-flood-store-ok = Synchronisé ({ $backend }) ; en cas de panne : { $on_fault ->
    [allow] laisser passer toutes les requêtes
    [refuse] refuser toute requête comptée
   *[count] compter dans ce serveur
} (on_store_fault = { $on_fault })
status-flood-store-failing = En panne depuis { $seconds } s ({ $backend })
status-flood-store-failing-description = { $decisions ->
        [one] { $decisions } requête comptée a été décidée
       *[other] { $decisions } requêtes comptées ont été décidées
    } sans le stockage, selon le choix « { $on_fault ->
    [allow] laisser passer toutes les requêtes
    [refuse] refuser toute requête comptée
   *[count] compter dans ce serveur
} ». Le comptage reprend par le stockage, et ce qui a été compté entre-temps est écrit, dès que la base de données répond à nouveau.
settings-api-limits = L'API des intégrateurs
settings-api-limits-help = Combien de requêtes chaque jeton d’API peut faire, sauf s’il a ses propres limites : tant par minute, et au plus tant à la fois. Une requête signée par un intégrateur de confiance en obtient davantage (docs/api.md). Ces limites ne valent que si « Compter et limiter les requêtes » (ci-dessus) est coché ; les plafonds d’instances en cours et de liens valent quel que soit l’interrupteur.

## Sizing chart (issue 10, part 2)
sizing-title = { $address ->
    [notice] Avis de paiement par période
    [login-address] Tentatives de connexion par période, par adresse client
    [login-account] Tentatives de connexion par période, par compte et adresse de client
   *[doorway] Requêtes de la porte d'interaction par période
}
sizing-intro = { $address ->
    [notice] Ce que l'adresse des avis de paiement a compté
    [login-address] Ce que la connexion a compté face à sa limite par adresse
    [login-account] Les tentatives sur des comptes existants arrivées jusqu'à la vérification du mot de passe, par compte et adresse de client, face aux échecs permis à chaque paire ; le total est celui du compte depuis toutes les adresses
   *[doorway] Ce que la porte d'interaction a compté
} { $periods ->
        [one] à la dernière période
       *[other] à chacune des { $periods } dernières périodes
    } de { $period } s, face aux limites réglées maintenant : où une limite a refusé des requêtes, ou en aurait refusé. Ce serveur garde ces chiffres depuis son démarrage (chaque serveur les siens) ; rechargez la page pour la période en cours.
sizing-empty = Rien n'a encore été compté { $periods ->
        [one] pendant la dernière période
       *[other] pendant les { $periods } dernières périodes
    } de { $period } s. Le graphique apparaît dès { $address ->
    [notice] qu'un avis de paiement est arrivé
    [login-address] que quelqu'un a tenté de se connecter
    [login-account] que quelqu'un a tenté de se connecter
   *[doorway] que la porte a reçu des requêtes
} en comptant.
sizing-total-heading = Requêtes au total, par période
sizing-per-caller-heading = { $address ->
    [notice] Avis par paiement : le plus notifié et le 99e centile
    [login-address] Tentatives par adresse client : la plus active et le 99e centile
    [login-account] Tentatives par compte et adresse : la paire la plus visée et le 99e centile
   *[doorway] Requêtes par lien : le plus actif et le 99e centile
}
sizing-total-desc = { $periods ->
        [one] { $periods } période
       *[other] { $periods } périodes
    } de { $period } s. Au plus { $most ->
        [one] { $most } requête
       *[other] { $most } requêtes
    } en une période ; { $refusals } refusées ou qui l'auraient été. Limite totale : { $limit }.
sizing-per-caller-desc = { $periods ->
        [one] { $periods } période
       *[other] { $periods } périodes
    }. { $address ->
    [notice] Le paiement le plus notifié a reçu au plus { $busiest } avis en une période ; 99 % des paiements en ont reçu au plus { $p99 }. Limite par paiement : { $limit }.
    [login-address] L'adresse client la plus active a fait au plus { $busiest ->
        [one] { $busiest } tentative
       *[other] { $busiest } tentatives
    } en une période ; 99 % des adresses en ont fait au plus { $p99 }. Limite par adresse : { $limit }.
    [login-account] Le compte le plus visé depuis une même adresse a subi au plus { $busiest ->
        [one] { $busiest } tentative
       *[other] { $busiest } tentatives
    } en une période ; 99 % des comptes et adresses en ont subi au plus { $p99 }. Échecs par compte et adresse : { $limit }.
   *[doorway] Le lien le plus actif a fait au plus { $busiest ->
        [one] { $busiest } requête
       *[other] { $busiest } requêtes
    } en une période ; 99 % des liens en ont fait au plus { $p99 }. Limite par lien : { $limit }.
}
sizing-total-tip = { $start } : { $requests ->
        [one] { $requests } requête
       *[other] { $requests } requêtes
    }, { $refusals } refusées ou qui l'auraient été
sizing-per-caller-tip = { $start } : { $address ->
    [notice] le paiement le plus notifié ({ $caller }) a reçu { $busiest } avis ; 99 % des paiements en ont reçu au plus { $p99 }
    [login-address] l'adresse client la plus active ({ $caller }) a fait { $busiest ->
        [one] { $busiest } tentative
       *[other] { $busiest } tentatives
    } ; 99 % des adresses en ont fait au plus { $p99 }
    [login-account] le compte le plus visé depuis une même adresse ({ $caller }) a subi { $busiest ->
        [one] { $busiest } tentative
       *[other] { $busiest } tentatives
    } ; 99 % des comptes et adresses en ont subi au plus { $p99 }
   *[doorway] le lien le plus actif ({ $caller }) a fait { $busiest ->
        [one] { $busiest } requête
       *[other] { $busiest } requêtes
    } ; 99 % des liens en ont fait au plus { $p99 }
}
sizing-limit-off = désactivée (0)
sizing-now = maintenant
sizing-legend-requests = Requêtes servies
sizing-legend-refusals = Refusées, ou qui l'auraient été (observation seulement)
sizing-legend-current = La période en cours, jusqu'ici (en pointillés)
sizing-legend-total-limit = La limite totale : { $limit }
sizing-legend-busiest = { $address ->
    [notice] Les avis du paiement le plus notifié
    [login-address] Les tentatives de l'adresse client la plus active
    [login-account] Les tentatives sur le compte le plus visé depuis une même adresse
   *[doorway] Les requêtes du lien le plus actif
}
sizing-legend-p99 = { $address ->
    [notice] 99e centile des paiements
    [login-address] 99e centile des adresses client
    [login-account] 99e centile des comptes et adresses
   *[doorway] 99e centile des liens
}
sizing-legend-per-caller-limit = { $address ->
    [notice] La limite par paiement : { $limit }
    [login-address] La limite par adresse : { $limit }
    [login-account] Échecs par compte et adresse : { $limit }
   *[doorway] La limite par lien : { $limit }
}
sizing-table-summary = Les mêmes chiffres en tableau
sizing-col-period = Période à partir de (UTC)
sizing-col-requests = Requêtes
sizing-col-busiest = { $address ->
    [notice] Paiement le plus notifié (empreinte à clé)
    [login-address] Adresse client la plus active (empreinte à clé)
    [login-account] Compte et adresse les plus visés (empreinte à clé)
   *[doorway] Lien le plus actif (empreinte à clé)
}
sizing-col-busiest-count = Ses requêtes
sizing-col-p99 = 99e centile
sizing-col-refused = Refusées
sizing-col-would-refuse = Qui l'auraient été
sizing-current = (en cours)
sizing-approximate = Plus de { $callers } { $address ->
    [notice] paiements sont venus
    [login-address] adresses client sont venues
    [login-account] paires de compte et d'adresse sont venues
   *[doorway] liens sont venus
} pendant les périodes ainsi marquées : le plus actif et le centile y sont des estimations.

# Issue 18: API token scopes
token-scope = Portée
token-abilities = Ce qu'il peut faire
token-ability-read = Lire les instances (read)
token-ability-start = Démarrer des instances (start)
token-ability-links = Émettre et révoquer des liens (links)
token-ability-workflows = Créer des processus et enregistrer de nouvelles versions de leurs définitions (workflows)
token-reach = Quelles instances
token-reach-own = Seulement les instances qu'il a démarrées
token-reach-all = Toutes les instances, y compris celles démarrées par les administrateurs et d'autres jetons
token-reach-own-short = les instances qu'il a démarrées
token-reach-all-short = toutes les instances
token-workflows = Quels workflows
token-workflows-help = N'en cochez aucun pour tous les workflows, y compris ceux créés plus tard.
token-workflows-every = tous les workflows
token-abilities-empty = Choisissez au moins une chose que le jeton peut faire.
token-ability-unknown = « { $value } » n'est pas une capacité : read, start, links ou workflows.
token-reach-unknown = « { $value } » n'est pas une portée : own ou all.
token-workflow-unknown = Aucun workflow ne s'appelle « { $name } ».

# A step shows earlier answers; a step's words in other languages.
workflow-show-help = « | show 1 » montre au participant de cette étape ce qui a été répondu à l'étape 1 (plusieurs : « show 1, 2 ») ; rien d'une autre étape n'est montré sans qu'on le demande.
workflow-translation-help = une ligne sous une étape donne ses mots dans une autre langue (en ou fr) : le titre, puis pour un formulaire ses libellés dans l'ordre, après une barre. Un visiteur voit sa langue, sinon les mots de l'étape.
definition-show = Ligne { $line } : « show » désigne des étapes précédentes par leur numéro, comme dans « | show 1, 2 ».
definition-condition = Ligne { $line } : écrivez une condition comme un champ d'une étape précédente, un opérateur et une valeur, comme dans « | only if Montant > 1000 » ; les opérateurs sont { $operators }, et « and » joint des conditions.
definition-condition-twice = Ligne { $line } : une étape a un seul « only if » ; joignez ses conditions par « and ».
definition-condition-nothing-before = Ligne { $line } : « only if { $field } » lit une réponse précédente, mais aucune étape avant celle-ci ne demande de champ.
definition-condition-field = Ligne { $line } : « { $field } » n'est pas un champ d'une étape précédente ; une condition peut lire { $allowed }.
definition-condition-number = Ligne { $line } : « { $value } » n'est pas un nombre à comparer avec « { $field } ».
definition-condition-order = Ligne { $line } : « { $field } » n'est pas un champ numérique ; comparez-le avec = ou ≠.
definition-condition-option = Ligne { $line } : « { $value } » n'est pas une option de « { $field } » : { $allowed }.
definition-quorum = Ligne { $line } : « 2 of 3 » (ou « any ») dit combien de branches d'une étape la ferment, de 1 à son nombre de branches, comme dans « review[alice,bob,carol]: Signature | 2 of 3 ».
definition-route-back = Ligne { $line } : « on reject back to N » renvoie l'instance à une étape précédente : N est le numéro d'une étape au-dessus de celle-ci, comme dans « review@manager: Vérifier | on reject back to 1 ».
definition-route-go = Ligne { $line } : une route va à une étape par son numéro ou à la fin : « on approve go 4 », « on reject go end », « if Montant > 1000 go 3 ». L'étape doit exister et ne pas être celle-ci.
definition-route-twice = Ligne { $line } : une étape a au plus un « on reject » et un « on approve ».
definition-rounds = Ligne { $line } : « rounds N » dit combien de tours une instance peut faire, de 1 à { $max }, comme dans « rounds 3 ».
definition-expires-to = Ligne { $line } : « expires … then to { $participant } » confie l'étape à un autre participant de ce workflow à l'échéance : nommez-en un qui répond à une autre étape, pour une étape à un seul participant.
definition-notify = Ligne { $line } : « notify: » nomme, une fois, les participants de ce workflow qui reçoivent l'issue par e-mail en plus du demandeur, comme dans « notify: finance, manager ».
definition-keep = Ligne { $line } : « keep: » dit, une fois, combien de temps une instance terminée garde ses réponses, ses fichiers et ses contacts, comme dans « keep: 365 days » (de 1 à 36500) ou « keep: forever ».
definition-segments = Ligne { $line } : cette étape a une barre de trop ; seuls les champs d'un formulaire, le montant d'un paiement et « show » viennent après des barres.
definition-translation-first = Ligne { $line } : une ligne de traduction se place sous l'étape qu'elle traduit.
definition-translation-twice = Ligne { $line } : cette étape a déjà ses mots dans cette langue.
definition-translation-labels = Ligne { $line } : donnez { $count ->
    [one] le libellé du champ
   *[other] les libellés des { $count } champs
} après une barre, dans l'ordre, séparés par des virgules.

# Where issued links point (status report, dashboard).
status-base-url = Liens
status-base-url-ok = Construits sur { $url }
status-base-url-elsewhere = Construits sur { $base }, mais le serveur écoute sur { $listening }
status-base-url-elsewhere-description = Les liens émis maintenant ne mènent nulle part. Enregistrez comme URL de base, dans Réglages, l'adresse à laquelle les visiteurs joignent ce serveur, ou lancez le serveur sur l'adresse que nomme l'URL de base.

# An older version's definition on a workflow's page.
workflow-definition-of = Étapes de la version { $number }
workflow-older-version-help = Une version antérieure : les instances qui ont démarré dessus la gardent jusqu'à leur fin.
workflow-show-newest = Afficher la version la plus récente.
definition-options = Ligne { $line } : le choix « { $field } » propose de 2 à 30 options différentes séparées par des barres obliques, comme dans « Taille (choice: Petit / Moyen / Grand) ».
definition-translation-options = Ligne { $line } : donnez à un choix autant d'options que la ligne de l'étape, séparées par des barres obliques.
definition-help = Ligne { $line } : « help: » prend quelques mots (500 caractères au plus), une fois par ligne.
workflow-choice-help = un choix entre des options ; « help: » ajoute quelques mots sous le titre de l'étape
option-help-help = quelques mots sous le titre de l'étape pour qui y répond (500 caractères au plus)
option-only-if-help = ne pose l'étape que si les conditions sur les réponses précédentes sont remplies (=, ≠, <, ≤, >, ≥ ; « and » les joint) ; sinon elle est passée
option-quorum-help = pour une étape à branches : la ferme dès que ce nombre approuve (« any » : une), ou comme refusée dès qu'il ne le peut plus
option-remind-help = relance un participant qui n'a pas répondu, après l'attente puis à chaque attente, au plus ce nombre de fois
option-expires-help = l'échéance de l'étape : l'instance se termine comme expirée si personne n'a répondu
option-expires-next-help = à l'échéance, l'instance passe plutôt à l'étape suivante
option-expires-to-help = à l'échéance, l'étape est confiée à la personne qui répond pour cet autre participant, qui reçoit un e-mail
option-forward-help = le participant de l'étape peut la transmettre à un collègue depuis la page du lien
option-reject-back-help = un refus renvoie l'instance à cette étape précédente pour modification : son participant voit le commentaire et ses réponses
option-reject-go-help = un refus mène à cette étape (« end » : l'instance se termine comme refusée)
option-approve-go-help = une fois approuvée (un formulaire : rempli), mène à cette étape (« end » : l'instance est terminée)
option-if-go-help = mène à cette étape (« end » : terminée) quand les conditions sont remplies, lues comme pour « only if »
option-rounds-help = combien de tours une instance peut faire quand des routes la renvoient en arrière (5 sauf mention) ; au-delà, elle se termine comme refusée
option-notify-help = une ligne à part : ces participants reçoivent aussi l'issue par e-mail, en plus de qui a répondu à la première étape (s'ils ont une adresse)
option-keep-help = une ligne à part : les jours pendant lesquels une instance terminée garde ses réponses, ses fichiers et ses contacts avant que cron ne les efface (ses étapes, ses dates et les empreintes des réponses restent) ; « keep: forever » les garde ; l'emporte sur records.retention_days du site
# Listes paginées (ticket 21).
instances-filter-any = Tous
instances-started-by = Démarrée par
instances-search = Rechercher dans le sujet
instances-filter-apply = Filtrer
instances-filter-clear = Effacer les filtres
instances-none-match = Aucune instance ne correspond à ces filtres ici.
instances-total = { $count ->
        [0] Aucune instance
        [one] Une instance
       *[other] { $count } instances
    }
instances-total-more = { $count ->
        [one] Plus d'une instance
       *[other] Plus de { $count } instances
    }
instances-total-at-least = Au moins { $count } correspondances parmi les instances les plus récentes
instances-search-window = { $count ->
        [one] Une recherche parcourt une instance par page{"\u202F"}; poursuivez avec «{"\u00A0"}Plus anciennes{"\u00A0"}».
       *[other] Une recherche parcourt { $count } instances par page{"\u202F"}; poursuivez avec «{"\u00A0"}Plus anciennes{"\u00A0"}».
    }
started-by-admin = Un administrateur
started-by-cli = La ligne de commande
started-by-api = Un jeton d'API
pager-label = Pages
pager-newer = ← Plus récentes
pager-older = Plus anciennes →
pager-newest = Les plus récentes
pager-older-history = Historique antérieur
instance-links-count = { $count ->
        [0] Aucun lien émis pour l'instant.
        [one] Un lien émis.
       *[other] { $count } liens émis, les plus récents d'abord.
    }
instance-history-count = { $count ->
        [one] Un événement.
       *[other] { $count } événements{"\u202F"}; la page en montre jusqu'à 50, les plus anciens d'abord.
    }
definition-file = Ligne { $line } : le champ de fichier « { $field } » prend une taille d'au plus 100 MB (comme 5 MB) et des sortes parmi { $kinds }, séparées par des virgules.
definition-files = Ligne { $line } : un formulaire a au plus { $max } champs de fichier.
interaction-max-file = Plus gros fichier qu'un formulaire accepte, en Mo
interaction-max-file-help = Un champ de fichier accepte 10 Mo sauf si sa définition nomme une taille ; aucun champ n'accepte plus que ceci. Les envois vont au fil de l'eau dans la base : cette limite borne le disque, pas la mémoire.

# The field types' table (src/domain/workflow/options.rs)
workflow-types-help = Le type d'un champ se met entre parenthèses après son libellé :
definition-range = Ligne { $line } : le champ numérique « { $field } » prend ses bornes sous la forme min..max, comme 0..100000 (un point pour les décimales, la plus petite d'abord), pas « { $given } ».
type-text-help = une ligne de texte, 200 caractères au plus ; un champ sans type entre parenthèses est du texte
type-long-help = plusieurs lignes de texte, 5000 caractères au plus
type-number-help = un nombre, saisi comme l'écrit la langue du visiteur (1 250,50 ou 1,250.50) et enregistré 1250.5 ; min..max après une virgule le borne, bornes incluses
type-email-help = une adresse électronique
type-date-help = une date, choisie dans un calendrier ou saisie comme l'écrit la langue du visiteur (31/12/2027 en français, 12/31/2027 en anglais) ; enregistrée 2027-12-31
type-checkbox-help = une case à cocher, enregistrée yes (ou vide si elle ne l'est pas) ; obligatoire, c'est un consentement : le formulaire ne continue pas tant qu'elle n'est pas cochée
type-url-help = une adresse web commençant par http:// ou https://, 2000 caractères au plus ; les étapes suivantes la montrent comme un lien
type-choice-help = l'une des options, de 2 à 30, séparées par des barres obliques
type-file-help = un fichier de 10 Mo au plus par défaut, ou de la taille indiquée, des sortes indiquées (pdf, image, text, office, zip) ou des documents par défaut ; vérifié d'après son contenu

instances-waiting = En attente de
instances-waiting-since = depuis
instances-csv = Télécharger en CSV

evidence-open = Dossier de preuve (imprimable, avec son empreinte)
evidence-crumb = Preuve
evidence-title = Dossier de preuve de l'instance n° { $id } : { $title }
evidence-version = Version
evidence-step-round = Étape et tour
evidence-step-round-value = étape { $step }, tour { $round }
evidence-started = Démarrée
evidence-site = Site
evidence-step-of-round = étape { $step } « { $title } », tour { $round }
evidence-verified-email = vérifiée par un code envoyé par courriel
evidence-hash-heading = SHA-256 de ce dossier
evidence-hash-help = Le SHA-256 du dossier JSON (Télécharger le JSON) sous sa forme canonique : clés triées, sans espaces, en UTF-8. Qui en détient une copie peut le recalculer et comparer ; un seul caractère changé donne une autre empreinte.
evidence-generated = Établi le
evidence-steps = Étapes
evidence-history = Historique
evidence-links = Liens
evidence-emails = Courriels
evidence-files = Fichiers
evidence-contacts = Contacts
evidence-none = Aucun.
evidence-answer-sha256 = SHA-256 de la réponse :
evidence-through-link = par le lien enregistré
evidence-client = client (empreinte à clé)
evidence-col-title = Titre
evidence-col-kind = Type
evidence-col-participants = Participants
evidence-col-participant = Participant
evidence-col-issued = Émis
evidence-col-expires = Expire
evidence-col-revoked = Révoqué
evidence-col-used-by = Réponses par ce lien
evidence-col-to = À
evidence-col-step = Étape
evidence-col-state = État
evidence-col-when = Quand
evidence-col-name = Nom
evidence-col-size = Taille
evidence-col-type = Type
evidence-col-address = Adresse
evidence-erased = Effacée le
evidence-receipts = Reçus
evidence-col-receipt = Reçu (jti)
evidence-col-answer = Réponse
evidence-download-json = Télécharger le JSON
evidence-back = Retour à l'instance
link-state-void = Annulé (clés du site changées)
status-voided-links = Liens annulés par un changement de clés
status-voided-links-value = { $count ->
    [one] 1 instance en cours n'a plus de lien valide
   *[other] { $count } instances en cours n'ont plus de lien valide
  }
status-voided-links-description = Les clés du site ont été changées et les liens de ces participants ne s'ouvrent plus. Envoyez de nouveaux liens depuis Changer les clés sur cette page, ou lancez : orchestra keys resend
status-form-keys = Changer les clés
keys-rotate-title = Changer les clés
keys-rotate-what = De nouvelles clés du site : tous les liens et jetons de retour émis jusqu'ici cessent de fonctionner (leur page le dit, et leur détenteur peut en demander un nouveau), et chaque administrateur se reconnecte, vous aussi. Les jetons d'API et les points de réception des webhooks continuent de fonctionner.
keys-rotate-resend = Envoyer un nouveau lien par e-mail à chaque participant qu'une instance en cours attend (à son adresse enregistrée)
keys-rotate-confirm = Changer les clés
keys-resend-title = Envoyer de nouveaux liens
keys-resend-what = Sans changer les clés : un e-mail avec un nouveau lien pour chaque participant qu'une instance en cours attend et qui a une adresse.
keys-resend-confirm = Envoyer de nouveaux liens
keys-resent = Les e-mails avec un nouveau lien sont en file pour chaque participant qu'une instance en cours attend.
option-verify-email-help = la page du lien ne montre rien de l'étape tant que son détenteur n'a pas saisi un code à six chiffres envoyé à l'adresse du participant (10 minutes, 5 essais, 3 codes par heure)
settings-advanced = Avancé : limites de requêtes
settings-advanced-intro = Les limites empêchent un afflux de requêtes, ou quelqu’un qui devine des mots de passe, de ralentir le site pour tout le monde. Les valeurs par défaut conviennent à la plupart des bureaux ; revenez ici quand le rapport d’état suggère un changement.
interaction-advanced-intro = Combien de requêtes un lien, et tous les liens ensemble, peuvent faire avant que le site réponde « trop de requêtes ». Les valeurs par défaut conviennent à la plupart des workflows.
settings-advanced-sizing = Avancé : l’activité de chaque limite
settings-operator-note = Pour les exploitants : chaque limite est un compteur sur une période glissante, gardé dans le stockage des compteurs (flood store, ORCHESTRA_FLOOD : sql ou memory) ; les jetons d’API puisent dans un seau (bucket) avec un débit et une rafale (burst) ; les graphiques montrent l’appelant le plus actif de chaque limite et le 99e centile. Les mêmes réglages se font avec « orchestra config set » (docs/interaction.md).

## OpenID Connect sign-in
login-oidc = Se connecter avec { $provider }
oidc-refused = La connexion avec { $provider } n'a pas abouti. Recommencez depuis cette page.
oidc-unavailable = { $provider } est injoignable pour le moment. Réessayez dans un instant, ou connectez-vous avec votre nom et votre mot de passe.
oidc-unverified = { $provider } n'a pas fourni d'adresse e-mail vérifiée : il ne peut pas vous connecter ici.
oidc-unknown = Aucun administrateur de ce site n'a l'adresse fournie par { $provider }. Un propriétaire peut l'ajouter à votre compte.
