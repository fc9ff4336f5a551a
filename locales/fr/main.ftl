## Commun à toutes les pages, aux pages d'erreur et à la ligne de commande.

nav-label = Administration
nav-dashboard = Tableau de bord
nav-workflows = Processus
nav-instances = Instances
nav-settings = Réglages
nav-status = Rapport d'état
nav-logout = Se déconnecter
language-switcher = Langue

action-edit = Modifier
action-save = Enregistrer
form-has-errors = Certains champs demandent votre attention ; rien n'a été enregistré.

field-required = Ce champ est obligatoire.
field-required-mark = obligatoire
field-email = Saisissez une adresse électronique comme nom@exemple.fr.
field-number = Saisissez un nombre, comme 12 ou 4,5.
field-too-long = C'est trop long : { $max } caractères au plus.
field-admin-name = Nom
field-password = Mot de passe
field-password-confirm = Mot de passe (encore)

error-not-found-title = Page introuvable
error-not-found = Il n'y a rien à cette adresse.
error-forbidden-title = Non autorisé
error-forbidden = Ce formulaire n'a pas pu être accepté. Revenez en arrière, rechargez la page et renvoyez-le.
error-bad-request-title = Requête incomprise
error-bad-request = La requête n'a pas pu être lue. Revenez en arrière et réessayez.
error-internal-title = Un problème est survenu
error-internal = Le site n'a pas pu répondre à cette requête. Réessayez dans un instant.

severity-ok = OK
severity-note = Remarque
severity-warning = Avertissement
severity-error = Erreur

state-active = En cours
state-complete = Terminée
state-rejected = Refusée
state-cancelled = Annulée

cli-unknown = Commande inconnue : { $command }. Lancez « orchestra help » pour la liste.
cli-unknown-option = Option inconnue : { $option }
cli-option-value = L'option { $option } attend une valeur.
cli-bad-address = Adresse d'écoute invalide : { $address } (par exemple 127.0.0.1:8080).
cli-bad-format = Format inconnu : { $format } (text ou json).
cli-failed = Échec : { $error }
cli-setup-url =
    Aucun administrateur n'existe encore. Ouvrez cette URL d'installation à usage unique pour créer le premier (valable 24 heures) :
      { $url }
cli-serving = Orchestra écoute sur { $address } (base de données : { $backend }, compteur de requêtes : { $flood }).
cli-metrics-serving = Métriques pour Prometheus sur { $address }/metrics (gardez cette adresse privée).
cli-doorway-uncapped = Avertissement : rien ne limite la porte d'interaction. Réglez les limites de requêtes dans Réglages (voir docs/interaction.md).
cli-connections = Connexions : au plus { $connections } à la fois, { $per_address } depuis une même adresse ; { $descriptors } descripteurs de fichier (limite stricte { $hard }).
cli-descriptors-low = Avertissement : { $descriptors } descripteurs de fichier ne permettent que { $connections } connexions, moins que ORCHESTRA_MAX_CONNECTIONS ({ $wanted }). Relevez la limite (LimitNOFILE= sous systemd ; voir docs/operations.md).
cli-password-stdin = Impossible de lire le mot de passe sur l'entrée standard.
cli-admin-created = Administrateur { $name } créé.
cli-admin-exists = Un administrateur nommé { $name } existe déjà.
cli-workflow-unknown = Aucun processus nommé { $workflow }. « orchestra workflow list » les affiche.
cli-workflow-created = Processus { $workflow } créé, version 1.
cli-workflow-saved = Processus { $workflow } enregistré : version { $version }.
cli-workflow-unchanged = Processus { $workflow } enregistré : la définition est celle de la dernière version, donc pas de nouvelle version.
cli-workflow-name-taken = Un processus nommé { $workflow } existe déjà. « orchestra workflow save { $workflow } » en enregistre une nouvelle version.
cli-workflow-label-required = Un nouveau processus a besoin de son libellé : --label "Note de frais".
cli-workflow-label-in-invalid = --label-in attend LANGUE=LIBELLÉ, la langue parmi : { $languages } (pas « { $given } »).
cli-workflow-file-unreadable = Impossible de lire la définition depuis { $file } : { $error }
cli-workflow-file-too-large = La définition dans { $file } dépasse 1 Mio ; une définition tient en 20 000 caractères au plus.
cli-keys-rotated = De nouvelles clés du site sont en place. Aucun lien ni jeton de retour émis avant maintenant ne fonctionne plus, et chaque administrateur se reconnecte. Les jetons d'API et les points de réception des webhooks continuent de fonctionner.
cli-keys-rotate-voids = Changer les clés du site annule tous les liens et jetons de retour émis jusqu'ici et les sessions de tous les administrateurs. Les jetons d'API continuent de fonctionner (orchestra token rotate-key les annule).
cli-confirm-with-yes = Rien n'a été changé. Lancez `orchestra { $command }` pour continuer.
cli-about-contact = Adresses des participants : contact erase
cli-about-contact-erase = Retire une adresse de toutes les lignes qui la contiennent, tout de suite, quel que soit l'état de l'instance (demande d'abord, sauf --yes)
cli-arg-contact-email = L'adresse à effacer (comparée sans tenir compte de la casse)
cli-contact-erase-voids = Effacer une adresse la retire de tous les contacts, envois d'e-mail et textes qui la contiennent, dans toutes les instances, en cours ou terminées ; le participant d'une instance en cours qui avait cette adresse ne reçoit plus d'e-mail. C'est irréversible.
cli-contact-erase-invalid = Ce n'est pas une adresse e-mail ; rien n'a été changé.
cli-contact-erased = { $rows } lignes changées : { $contacts } contacts retirés, { $mails } envois d'e-mail nettoyés, { $texts } textes où figurait l'adresse.
cli-confirm-ask = Tapez oui pour continuer :{" "}
cli-confirm-kept = Rien n'a été changé.
cli-token-rotate-voids = Changer la clé des jetons d'API annule tous les jetons d'API faits jusqu'ici ; les liens, les sessions et les clés du site ne changent pas.
cli-token-key-rotated = Une nouvelle clé des jetons d'API est en place. Aucun jeton fait avant maintenant ne fonctionne plus : faites-en de nouveaux (orchestra token create).
cli-about-token-rotate-key = Nouvelle clé des jetons d'API : tous les jetons cessent de fonctionner (demande d'abord, sauf --yes)
cli-arg-yes = Changer sans demander

config-unknown-key = Réglage inconnu : { $key }. « orchestra config list » les affiche.
config-saved = { $key } vaut maintenant { $value }.
config-refused = { $key } : { $reason }
setting-site-name = Saisissez un nom de site de 1 à 100 caractères.
setting-base-url = Saisissez une adresse web commençant par http:// ou https://, comme https://processus.exemple.fr.
setting-boolean = Saisissez true ou false.
setting-on-store-fault = Saisissez count, allow ou refuse.
setting-not-a-number = Saisissez un nombre entier de { $min } à { $max }.
setting-out-of-range = Saisissez un nombre entier de { $min } à { $max }.
setting-duration = Saisissez une durée de { $min } à { $max } secondes : 3600, 30m, 12h ou 7d.
config-env-flood = ORCHESTRA_FLOOD doit valoir « sql » ou « memory », pas « { $value } ».
config-env-number = { $name } doit être un nombre entier de { $min } à { $max }, pas « { $value } ».

# Issue 9
error-login-limited-title = Trop de tentatives de connexion
error-login-limited = Il y a eu trop de tentatives de connexion depuis cette adresse ou pour ce compte. Attendez un moment, puis réessayez.
error-busy-title = Occupé
error-busy = Le site est occupé à vérifier d'autres connexions. Réessayez dans un instant.
error-unavailable-title = Indisponible
error-unavailable = Le site ne peut rien enregistrer pour le moment. L'administrateur est prévenu ; réessayez plus tard.
error-too-large-title = Trop volumineux
error-too-large = Ce que vous avez envoyé dépasse ce que cette page accepte. Revenez en arrière, raccourcissez-le et réessayez.
error-timed-out-title = Trop lent
error-timed-out = Ce que vous avez envoyé a mis trop de temps à arriver. Revenez en arrière et réessayez.
error-crowded-title = Occupé
error-crowded = Le site répond à autant de requêtes qu'il le peut en ce moment. Réessayez dans un instant.
config-env-database-scheme = ORCHESTRA_DATABASE_URL doit être un chemin SQLite ou l'un de { $schemes }, pas « { $value } ».
config-env-trusted-proxies = ORCHESTRA_TRUSTED_PROXIES doit lister des adresses ou des plages CIDR (comme 127.0.0.1, 10.0.0.0/8), séparées par des virgules ; « { $value } » n'en est pas une.
config-env-client-ip-header = ORCHESTRA_CLIENT_IP_HEADER doit valoir « x-forwarded-for », « x-real-ip » ou « forwarded » : le seul en-tête que votre proxy écrit ; pas « { $value } ».
config-env-client-ip-header-alone = ORCHESTRA_CLIENT_IP_HEADER vaut « { $value } », mais ORCHESTRA_TRUSTED_PROXIES ne nomme aucun proxy : aucun en-tête ne serait lu. Nommez le proxy, ou retirez l'en-tête.
config-env-metrics-bind = ORCHESTRA_METRICS_BIND doit être une adresse et un port où servir les métriques, comme 127.0.0.1:9464, pas « { $value } ».
db-missing = Il n'y a pas de base de données à { $path }. Lancez « orchestra init » pour en créer une, ou vérifiez ORCHESTRA_DATABASE_URL.
db-refused = Le serveur de base de données a refusé la connexion : fonctionne-t-il, sur cet hôte et ce port ?
db-unknown-host = Le nom d'hôte du serveur de base de données est inconnu.
db-authentication = Le serveur de base de données a refusé le nom d'utilisateur ou le mot de passe.
db-no-such-database = La base nommée dans ORCHESTRA_DATABASE_URL n'existe pas sur ce serveur.
db-not-a-database = Ce n'est pas une base de données utilisable par Orchestra (pas un fichier SQLite, ou pas un serveur PostgreSQL).
db-timed-out = La base de données n'a pas répondu en { $seconds ->
        [one] { $seconds } seconde
       *[other] { $seconds } secondes
    }.
db-not-migrated = La base de données n'a pas été préparée par cette version d'Orchestra (migrations manquantes). Lancez « orchestra init » pour les appliquer.
db-other = La base de données n'a pas pu être ouverte : { $error }
cli-init-done = La base de données est prête.

# Issue 12: the integrator API
api-not-found = Cette ressource n'existe pas.
api-internal = Une erreur s'est produite de notre côté.
api-bad-text = La requête contient du texte qui ne peut pas être enregistré.
api-unauthorized = Un jeton d'API valide est nécessaire : envoyez-le comme Authorization: Bearer <jeton>.
api-too-many-failures = Trop de requêtes depuis cette adresse avec un jeton que ce site ne connaît pas. Attendez avant de réessayer (Retry-After dit combien de temps).
api-bad-signature = La signature de la requête n'est pas valide : une clé inconnue, une requête modifiée, un horodatage à plus de 5 minutes ou une signature déjà utilisée.
api-bad-json = Le corps n'est pas le JSON que cet appel attend.
api-field-type = Ce champ n'a pas le type que cet appel attend (voir /api/v1/openapi.json).
api-method-not-allowed = Cette ressource n'accepte pas cette méthode ; l'en-tête Allow indique celles qu'elle accepte.
api-body-too-large = Le corps dépasse ce que cet appel accepte.
api-unsupported-media-type = Le corps doit être du JSON, envoyé avec Content-Type: application/json.
api-idempotency-key-invalid = Une Idempotency-Key compte de 1 à 255 caractères ASCII visibles (sans espace).
api-idempotency-key-reused = Cette Idempotency-Key a servi à une autre requête ; prenez une nouvelle clé pour une nouvelle requête.
api-idempotency-key-in-progress = La première requête portant cette Idempotency-Key est encore en cours ; réessayez dans un instant.
api-body-timed-out = Le corps n'est pas arrivé à temps.
api-busy = Le serveur répond à autant de requêtes qu'il le peut ; réessayez dans un instant.
api-nul = Le texte ne peut pas contenir de caractère NUL (\u0000).
api-workflow-missing = Nommez le workflow par son nom machine.
api-workflow-name-taken = Un processus porte déjà ce nom ; enregistrez-en une nouvelle version avec PUT /api/v1/workflows/{"{"}name{"}"}.
api-participant-missing = Nommez le participant à confier, tel que le processus le nomme.
api-running-cap = Ce jeton a déjà { $cap ->
        [one] { $cap } instance
       *[other] { $cap } instances
    } en cours, son plafond. Attendez que certaines se terminent.
api-email-rate-address = Cette adresse a reçu { $cap } courriels de lien par l'API cette heure-ci, autant qu'elle le peut : réessayez l'heure prochaine.
api-email-rate-token = Ce jeton a demandé { $cap } courriels de lien cette heure-ci, autant qu'il le peut : réessayez l'heure prochaine.
api-link-cap = Cette instance a reçu { $cap ->
        [one] { $cap } lien
       *[other] { $cap } liens
    } dans les dernières 24 heures, son plafond.
skip-to-content = Aller au contenu
breadcrumbs-label = Vous êtes ici
crumb-workflow = Processus n° { $id }
crumb-instance = Instance n° { $id }
language-switch-held = Ce formulaire contient ce que vous avez saisi : envoyez-le, ou rechargez la page, avant de changer de langue.
copy-button = Copier
copy-done = Le lien est copié.
copy-failed = La copie a échoué : sélectionnez le lien et copiez-le vous-même.
signed-out = Vous êtes déconnecté.
config-env-log = ORCHESTRA_LOG doit être un filtre tracing comme « info » ou « orchestra=debug,sqlx=warn », pas « { $value } » ({ $error }).
cli-base-url-elsewhere = Avertissement : l'URL de base { $base_url } n'est pas là où ce serveur écoute ({ $address }) : les liens émis maintenant y mènent. Changez-la avec : orchestra config set orchestra.base_url URL.
cli-about = Orchestra : des processus auxquels on répond par des liens signés.
cli-after-help = Lancez « orchestra COMMANDE --help » pour les options d'une commande. Environnement : ORCHESTRA_DATABASE_URL (par défaut sqlite:orchestra.db), ORCHESTRA_FLOOD (sql ou memory), ORCHESTRA_LOG, ORCHESTRA_LANG, ORCHESTRA_TRUSTED_PROXIES.
cli-heading-usage = Utilisation :
# clap puts the colon after a heading: the narrow no-break space French wants goes in the heading.
cli-heading-commands = Commandes{"\u202F"}
cli-heading-options = Options{"\u202F"}
cli-value-command = COMMANDE
cli-help-flag = Affiche cette aide
cli-version-flag = Affiche la version
cli-about-serve = Lance le serveur web
cli-arg-bind = L'adresse d'écoute (par défaut 127.0.0.1:8080)
cli-about-init = Crée la base de données (un fichier SQLite) si elle manque, et la migre
cli-about-admin = Administrateurs : admin list, create, password, reset, disable, enable, remove, unlock
cli-about-admin-create = Crée un administrateur (mot de passe lu dans ORCHESTRA_ADMIN_PASSWORD, sinon demandé dans un terminal, sinon une ligne de l'entrée standard)
cli-arg-admin-name = Le nom de l'administrateur
cli-about-workflow = Processus : workflow list
cli-about-workflow-list = Liste les processus : id, nom, libellé, étapes
cli-about-workflow-create = Crée un processus à partir d'une définition lue dans --file ou sur l'entrée standard
cli-about-workflow-save = Enregistre la définition d'un processus lue dans --file ou sur l'entrée standard (une nouvelle version si elle a changé)
cli-about-workflow-show = Affiche la dernière définition d'un processus, telle que save la relit
cli-about-instance-reassign = Confie un participant d'une instance en cours à un nouveau contact : ses anciens liens cessent de fonctionner et le nouveau contact reçoit un e-mail
cli-arg-reassign-participant = Le participant à confier (tel que le processus le nomme)
cli-reassign-contact = Donnez le nouveau contact avec --contact { $participant }=EMAIL (et --contact-name, --contact-lang si vous le souhaitez).
cli-instance-reassigned = Instance { $id } : { $participant } confié au nouveau contact. Ses anciens liens ne fonctionnent plus ; le nouveau contact reçoit un e-mail quand l'étape est la sienne.
cli-about-instance = Instances : instance start PROCESSUS, instance cancel INSTANCE
cli-about-instance-start = Démarre une instance ; affiche son id
cli-about-instance-show = Afficher une instance : son processus, son état, son étape, qui elle attend, les adresses des participants et son historique
cli-instance-show-title = Instance { $id } : { $title }
cli-instance-show-workflow = Processus : { $label } ({ $name }), version { $version }
cli-instance-show-state = État : { $state }
cli-instance-show-step = Étape { $number } sur { $steps } : { $title }
cli-instance-show-waiting = En attente de : { $participants }
cli-instance-show-contact = Contact : { $participant } <{ $email }> ({ $lang })
cli-instance-show-history = Historique ({ $shown } sur { $total }, du plus ancien au plus récent) :
cli-about-instance-cancel = Annule une instance en cours : ses liens cessent de fonctionner, un paiement en cours est clos
cli-arg-reason = Pourquoi, gardé dans l'historique de l'instance (500 caractères au plus)
cli-instance-cancelled = Instance { $id } annulée.
cli-arg-workflow = Le nom ou l'id du processus
cli-arg-workflow-name = Le nom machine du processus : lettres minuscules, chiffres et _
cli-arg-workflow-label = Le libellé du processus, tel que les gens le voient
cli-arg-workflow-label-keep = Un nouveau libellé (le processus garde le sien sinon)
cli-arg-workflow-label-in = Le libellé dans une autre langue (fr=…), répétable ; vide, il est retiré
cli-arg-workflow-file = Le fichier qui contient la définition (l'entrée standard sinon)
cli-arg-subject = Le titre du sujet (par défaut : le libellé du processus)
cli-arg-body = Le texte du sujet
cli-about-link = Liens : link issue INSTANCE --participant NOM
cli-about-link-issue = Émet un lien ; affiche son URL
cli-arg-instance = L'id de l'instance
cli-arg-participant = La personne à qui le lien est destiné (--branch est la même option)
cli-arg-ttl = La durée de validité du lien : 3600, 30m, 12h, 7d
cli-about-config = Réglages : config get CLÉ, config set CLÉ VALEUR…, config list
cli-about-config-get = Affiche un réglage
cli-about-config-set = Modifie des réglages ; plusieurs paires sont enregistrées ensemble ou pas du tout
cli-about-config-list = Affiche tous les réglages
cli-arg-key = La clé du réglage (voir config list)
cli-arg-pairs = Une clé et sa valeur, autant de paires que voulu
cli-about-status = Le rapport d'état ; sort avec 0 OK, 1 avertissement, 2 erreur
cli-arg-format = text ou json
cli-about-cron = Maintenance périodique
cli-about-keys = Clés du site : keys rotate
cli-about-keys-rotate = Nouvelles clés du site : tous les liens et jetons de retour cessent de fonctionner, les administrateurs sont déconnectés (demande d'abord, sauf --yes)
cli-about-completions = Affiche un script de complétion pour un shell (bash, zsh, fish, elvish, powershell)
cli-arg-shell = Le shell
cli-about-help = Affiche cette aide
cli-about-version = Affiche la version
cli-missing-argument = Il manque { $argument }. Lancez la commande avec --help pour voir comment l'utiliser.
cli-repeated-option = L'option { $option } est donnée plus d'une fois.
cli-config-pairs = Donnez chaque réglage sous forme de paire CLÉ VALEUR.
cli-bad-shell = Shell inconnu : { $shell } (bash, zsh, fish, elvish ou powershell).
cli-heading-arguments = Arguments{"\u202F"}
cli-about-token = Jetons d'API : token create NOM, token list, token scope NOM, token revoke NOM, token rotate-key
cli-about-token-create = Créer un jeton d'API ; l'affiche une seule fois
cli-arg-token-name = Le nom du jeton (minuscules, chiffres, - et _)
cli-arg-token-rate = Requêtes rechargées par minute (par défaut : celles du site)
cli-arg-token-burst = Le plus de requêtes à la fois (par défaut : celle du site)
cli-about-token-list = Lister les jetons d'API : nom, débit, rafale, dernière utilisation, état, capacités, portée, workflows
cli-about-token-revoke = Révoquer un jeton d'API
cli-about-integrator-key = Clés de signature des intégrateurs : integrator-key create NOM
cli-about-integrator-key-create = Créer (ou remplacer) la clé de signature d'un intégrateur ; affiche l'identifiant et le secret une seule fois
cli-arg-integrator-name = Le nom de l'intégrateur
cli-token-number = { $option } prend un nombre entier de 1 à 1000000, pas « { $value } ».
cli-token-created = Jeton { $name } créé : il est affiché ci-dessus, cette seule fois.
cli-token-revoked = Jeton { $name } révoqué.
cli-token-unknown = Aucun jeton actif nommé { $name }.

# Issue 18: API token scopes
api-forbidden-scope = La portée de ce jeton n'inclut pas { $ability }. Un administrateur peut l'élargir (docs/api.md).
api-forbidden-workflow = La portée de ce jeton n'inclut pas le workflow { $workflow }.
cli-arg-token-abilities = Ce que le jeton peut faire, séparé par des virgules : read, start, links, workflows (par défaut : read, start, links)
cli-arg-token-reach = Quelles instances : own (celles qu'il a démarrées, par défaut) ou all
cli-arg-token-workflows = Quels workflows, noms machine séparés par des virgules (par défaut : * pour tous)
cli-about-token-scope = Changer la portée d'un jeton : les options données remplacent ces parties, les autres restent
cli-token-scope = Jeton { $name } : capacités { $abilities }, portée { $reach }, workflows { $workflows }.
field-choice = Choisissez l'une des options.
api-bad-cursor = Ce curseur ne vient pas de cette API{"\u202F"}: renvoyez un next_cursor (ou history_cursor) tel quel, ou omettez-le pour la page la plus récente.
api-bad-limit = Donnez un nombre entier de 1 à { $max }.
api-bad-state = Donnez active, complete, rejected ou cancelled.
cli-about-instance-list = Liste les instances, les plus récentes d'abord, une page à la fois
cli-arg-list-workflow = Seulement les instances de ce processus (son nom machine ou son numéro)
cli-arg-list-state = Seulement les instances dans cet état{"\u202F"}: active, complete, rejected ou cancelled
cli-arg-list-search = Seulement les instances dont le titre du sujet contient ce texte, sans tenir compte de la casse
cli-arg-list-limit = Combien une page en montre, de 1 à 200 (50 par défaut)
cli-arg-list-before = Commencer sous ce numéro d'instance (la commande de la page suivante le donne)
cli-arg-list-format = text (par défaut) ou csv : toutes les instances que les filtres retiennent, avec qui chacune attend et depuis quand
cli-about-instance-evidence = Afficher le dossier de preuve d'une instance : chaque étape, réponse (avec son SHA-256), lien, courriel et fichier, et le SHA-256 du dossier
cli-arg-evidence-format = json (par défaut, comme l'API le donne) ou html (un document imprimable)
cli-state-unknown = Aucun état nommé { $state }{"\u202F"}: donnez active, complete, rejected ou cancelled.
cli-limit-invalid = Donnez à --limit un nombre entier de 1 à { $max }.
cli-before-invalid = Donnez à --before un numéro d'instance, un nombre entier supérieur à 0.
cli-list-state = état
cli-list-workflow = processus
cli-list-started-by = démarrée par
cli-list-updated = dernier changement
cli-list-title = sujet
cli-list-next = Page suivante{"\u202F"}: { $command }
config-env-files-dir = ORCHESTRA_FILES_DIR doit nommer un répertoire existant ; « { $value } » n'en est pas un.

# A form's typed fields (src/domain/workflow/values.rs)
field-number-ambiguous = « { $typed } » se lit de deux façons : écrivez { $whole } ou { $decimal }.
field-number-digits = Saisissez un nombre d'au plus { $max } chiffres.
field-number-range = Saisissez un nombre de { $min } à { $max }.
field-date = Saisissez une date, comme 31/12/2027.
field-date-impossible = Le { $typed } n'est pas un jour du calendrier : vérifiez le jour et le mois.
field-date-placeholder = JJ/MM/AAAA
field-url = Saisissez une adresse web commençant par https:// ou http://, comme https://exemple.org.
field-checkbox-required = Cochez cette case pour continuer.
field-checkbox-yes = Oui
field-checkbox-no = Non
date-long = { $day } { $month } { $year }
month-1 = janvier
month-2 = février
month-3 = mars
month-4 = avril
month-5 = mai
month-6 = juin
month-7 = juillet
month-8 = août
month-9 = septembre
month-10 = octobre
month-11 = novembre
month-12 = décembre
cli-arg-keys-resend = Mettre aussi en file un e-mail avec un nouveau lien pour chaque participant qu'une instance en cours attend
cli-about-keys-resend = Mettre en file un e-mail avec un nouveau lien pour chaque participant qu'une instance en cours attend (après un changement de clés)
cli-keys-without-link = { $count ->
    [one] 1 instance en cours n'a plus de lien valide. Envoyez de nouveaux liens avec : orchestra keys resend
   *[other] { $count } instances en cours n'ont plus de lien valide. Envoyez de nouveaux liens avec : orchestra keys resend
  }
cli-keys-resent = { $emails ->
    [one] 1 e-mail avec un nouveau lien mis en file
   *[other] { $emails } e-mails avec un nouveau lien mis en file
  } pour { $instances ->
    [one] 1 instance en cours.
   *[other] { $instances } instances en cours.
  }

## orchestra receipt verify (cli::receipts)
cli-about-receipt = Reçus remis aux participants : receipt verify
cli-about-receipt-verify = Vérifier la signature d’un reçu avec les clés de ce site et afficher ce qu’il dit (code 0 : valide, 1 : non)
cli-arg-receipt-file = Le fichier du reçu (un JWS compact), ou - pour l’entrée standard
cli-receipt-unreadable = Impossible de lire { $file }.
cli-receipt-malformed = Reçu non valide : ce n’est pas un JWS compact (trois parties base64url de JSON).
cli-receipt-algorithm = Reçu non valide : il n’est pas signé avec EdDSA.
cli-receipt-unknown-key = Reçu non valide : il est signé avec une clé que ce site n’a jamais publiée (celle d’un autre site, ou une contrefaçon).
cli-receipt-signature = Reçu non valide : la signature ne correspond pas, il a donc été modifié après sa signature.
cli-receipt-claims = Reçu non valide : la signature est bonne mais son contenu n’est pas celui d’un reçu.
cli-receipt-valid = Reçu valide, signé par ce site (clé { $kid }).
cli-receipt-line = { $label } : { $value }
cli-receipt-id = Reçu
cli-receipt-issuer = Site
cli-receipt-issued = Date d’émission
cli-receipt-instance = Instance
cli-receipt-step = Étape
cli-receipt-round = Tour
cli-receipt-participant = Participant
cli-receipt-answered = Date de la réponse
cli-receipt-link = Fiche du lien
cli-receipt-link-none = aucune
cli-receipt-sha256 = SHA-256 de la réponse
cli-receipt-fields = Champs
cli-receipt-file = fichier { $name }, SHA-256 { $sha256 }
cli-receipt-matches = L’historique de l’instance contient toujours cette réponse, avec le même SHA-256.
cli-receipt-erased = Les mots de la réponse ont été effacés de l’historique ; le SHA-256 qui y est gardé est celui de ce reçu.
cli-receipt-differs = L’historique de l’instance contient un autre SHA-256 pour cette réponse.
cli-receipt-absent = L’historique ne contient pas ce reçu (son instance a peut-être été supprimée).
config-env-oidc-partial = La connexion OpenID Connect demande ORCHESTRA_OIDC_ISSUER, ORCHESTRA_OIDC_CLIENT_ID et ORCHESTRA_OIDC_CLIENT_SECRET ensemble ; il manque : { $names }.
config-env-oidc-issuer = ORCHESTRA_OIDC_ISSUER doit être l'adresse https du fournisseur (l'émetteur, par ex. https://accounts.google.com) ; « { $value } » n'en est pas une.
