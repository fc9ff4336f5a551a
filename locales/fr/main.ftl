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

cli-usage =
    Orchestra : des processus auxquels on répond par des liens signés.

    Usage : orchestra COMMANDE

    Commandes :
      serve [--bind ADRESSE]                               lance le serveur web (par défaut 127.0.0.1:8080)
      init                                                 crée la base de données (un fichier SQLite) si elle manque, et la migre
      admin create NOM                                     crée un administrateur (mot de passe dans ORCHESTRA_ADMIN_PASSWORD ou sur l'entrée standard)
      workflow list                                        liste les processus : id, nom, libellé, étapes
      instance start PROCESSUS [--subject TITRE] [--body TEXTE]   démarre une instance ; affiche son id
      link issue INSTANCE [--participant NOM] [--ttl DURÉE] émet un lien ; affiche son URL (DURÉE : 3600, 30m, 12h, 7d)
      config get CLÉ | config set CLÉ VALEUR | config list lit et modifie les réglages
      status [--format text|json]                          le rapport d'état ; sort avec 0 si OK, 1 si avertissement, 2 si erreur
      cron                                                 maintenance périodique
      keys rotate                                          nouvelles clés du site : aucun lien émis jusqu'ici ne fonctionne plus

    Environnement : ORCHESTRA_DATABASE_URL (par défaut sqlite:orchestra.db), ORCHESTRA_FLOOD (sql ou memory),
    ORCHESTRA_LOG, ORCHESTRA_LANG, ORCHESTRA_TRUSTED_PROXIES.
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
cli-doorway-uncapped = Avertissement : rien ne limite la porte d'interaction. Réglez les limites de requêtes dans Réglages (voir docs/interaction.md).
cli-password-stdin = Impossible de lire le mot de passe sur l'entrée standard.
cli-admin-created = Administrateur { $name } créé.
cli-admin-exists = Un administrateur nommé { $name } existe déjà.
cli-workflow-unknown = Aucun processus nommé { $workflow }. « orchestra workflow list » les affiche.
cli-keys-rotated = De nouvelles clés du site sont en place. Aucun lien ni jeton émis avant maintenant ne fonctionne plus.

config-unknown-key = Réglage inconnu : { $key }. « orchestra config list » les affiche.
config-saved = { $key } vaut maintenant { $value }.
config-refused = { $key } : { $reason }
setting-site-name = Saisissez un nom de site de 1 à 100 caractères.
setting-base-url = Saisissez une adresse web commençant par http:// ou https://, comme https://processus.exemple.fr.
setting-boolean = Saisissez true ou false.
setting-on-store-fault = Saisissez count, allow ou refuse.
setting-not-a-number = Saisissez un nombre entier de { $min } à { $max }.
setting-out-of-range = Saisissez un nombre entier de { $min } à { $max }.
config-env-flood = ORCHESTRA_FLOOD doit valoir « sql » ou « memory », pas « { $value } ».
config-env-number = { $name } doit être un nombre entier de { $min } à { $max }, pas « { $value } ».

# Issue 9
error-login-limited-title = Trop de tentatives de connexion
error-login-limited = Il y a eu trop de tentatives de connexion depuis cette adresse ou pour ce compte. Attendez un moment, puis réessayez.
error-busy-title = Occupé
error-busy = Le site est occupé à vérifier d'autres connexions. Réessayez dans un instant.
error-unavailable-title = Indisponible
error-unavailable = Le site ne peut rien enregistrer pour le moment. L'administrateur est prévenu ; réessayez plus tard.
config-env-database-scheme = ORCHESTRA_DATABASE_URL doit être un chemin SQLite ou l'un de { $schemes }, pas « { $value } ».
config-env-trusted-proxies = ORCHESTRA_TRUSTED_PROXIES doit lister des adresses ou des plages CIDR (comme 127.0.0.1, 10.0.0.0/8), séparées par des virgules ; « { $value } » n'en est pas une.
db-missing = Il n'y a pas de base de données à { $path }. Lancez « orchestra init » pour en créer une, ou vérifiez ORCHESTRA_DATABASE_URL.
db-refused = Le serveur de base de données a refusé la connexion : fonctionne-t-il, sur cet hôte et ce port ?
db-unknown-host = Le nom d'hôte du serveur de base de données est inconnu.
db-authentication = Le serveur de base de données a refusé le nom d'utilisateur ou le mot de passe.
db-no-such-database = La base nommée dans ORCHESTRA_DATABASE_URL n'existe pas sur ce serveur.
db-not-a-database = Ce n'est pas une base de données utilisable par Orchestra (pas un fichier SQLite, ou pas un serveur PostgreSQL).
db-timed-out = La base de données n'a pas répondu en { $seconds } secondes.
db-other = La base de données n'a pas pu être ouverte : { $error }
cli-init-done = La base de données est prête.
