## La porte d'interaction, ses refus et le prestataire de paiement de test.

doorway-too-many-requests = Trop de requêtes pour cette page en ce moment. Veuillez réessayer plus tard.
doorway-refused-title = Ce lien ne peut pas être utilisé
doorway-refused = Ce lien n'est pas valide. Il a peut-être expiré ou été remplacé ; demandez-en un nouveau à la personne qui vous l'a envoyé.
doorway-step = Étape
doorway-branch = pour
doorway-submit = Envoyer
doorway-submit-review = Envoyer ma décision
doorway-form-has-errors = Certaines réponses demandent votre attention. Rien n'a encore été envoyé.
doorway-review-decision = Votre décision
doorway-approve = Approuver
doorway-reject = Refuser
doorway-comment = Commentaire
doorway-review-choose = Choisissez d'approuver ou de refuser.
doorway-review-reason = Indiquez dans le commentaire pourquoi vous refusez.
doorway-amount = Montant à payer :
doorway-pay = Payer maintenant
doorway-payment-cancelled = Le paiement a été annulé. Vous pouvez réessayer.
doorway-sent-back = Renvoyé pour modification par { $who } : « { $comment } » Vos réponses précédentes sont reprises ci-dessous.
doorway-forward = Transmettre à un collègue
doorway-forward-help = Quelqu'un d'autre devrait répondre à cette étape ? Donnez son adresse : il reçoit son propre lien, et ce lien-ci cesse de fonctionner.
doorway-forward-email-label = Son adresse e-mail
doorway-forward-name-label = Son nom
doorway-forward-lang-label = Sa langue
doorway-forward-submit = Transmettre cette étape
doorway-forward-email = Donnez l'adresse du collègue qui doit répondre.
doorway-forward-limit = Cette étape a déjà été transmise { $max } fois ; elle ne peut plus l'être.
doorway-forward-not-offered = Cette étape ne peut pas être transmise maintenant.
doorway-forwarded-title = Transmise
doorway-forwarded = { $to } a reçu par e-mail un lien pour répondre à cette étape. Ce lien ne fonctionne plus.
doorway-thanks-title = Merci
doorway-thanks-next = Votre réponse a été enregistrée. L'étape suivante revient à d'autres personnes ; vous n'avez plus rien à faire.
doorway-thanks-waiting = Votre réponse a été enregistrée. D'autres personnes doivent encore répondre à cette étape.
doorway-thanks-complete = Votre réponse a été enregistrée et tout est maintenant terminé.
doorway-rejected = La demande a été refusée ; il n'y a plus rien à répondre.
doorway-closed-title = Plus rien à répondre
doorway-complete = Toutes les étapes de cette demande ont reçu une réponse. Merci.
doorway-cancelled = Cette demande a été annulée ; il n'y a plus rien à répondre.
doorway-nothing-title = Rien à répondre ici
doorway-nothing-here = Ce lien n'a rien à répondre pour le moment.
doorway-already-answered = Cette étape a déjà reçu une réponse par ce lien.

provider-title = Prestataire de paiement de test
provider-banner = MODE TEST : ceci est le prestataire de test intégré à Orchestra. Aucun argent ne circule.
provider-amount = Montant :
provider-explain = Choisissez ce que le prestataire doit renvoyer à Orchestra.
provider-pay = Simuler un paiement réussi
provider-cancel = Annuler le paiement

# Issue 8: payments confirmed by the provider's notice
doorway-payment-unavailable = Les paiements ne peuvent pas être reçus pour le moment. Veuillez réessayer plus tard.
doorway-payment-waiting-title = En attente du paiement
doorway-payment-waiting = Nous attendons la confirmation du prestataire de paiement. Cette page se met à jour d'elle-même.
doorway-payment-confirmed-title = Paiement confirmé
doorway-payment-confirmed = Le prestataire de paiement a confirmé votre paiement. Merci.
provider-settled = Ce paiement est réglé.
provider-back = Retour au site

# Earlier answers a step shows (the definition's "show").
doorway-earlier = Ce qui a été répondu avant
doorway-earlier-none = Rien n'a été répondu à cette étape.

# When the link stops working; a warning when that is close; an answer on a just-expired link.
doorway-expires = Ce lien fonctionne jusqu'au
doorway-expires-soon-hours = Ce lien expire dans { $hours ->
    [one] une heure environ
   *[other] { $hours } heures environ
} : répondez d'ici là, ou demandez un nouveau lien.
doorway-expires-soon-minutes = Ce lien expire dans { $minutes ->
    [one] une minute
   *[other] { $minutes } minutes
} : répondez maintenant, ou demandez un nouveau lien.
doorway-expired-title = Ce lien a expiré
doorway-expired-kept = Votre réponse n'a pas été enregistrée : ce lien a cessé de fonctionner le { $expired }. Ce que vous avez saisi figure ci-dessous ; copiez-le avant de quitter cette page, et demandez un nouveau lien à la personne qui vous l'a envoyé.
doorway-choose = Choisissez…
field-file-too-large = Ce fichier dépasse { $size } { $unit ->
        [B] o
        [KB] Ko
       *[MB] Mo
    } ; choisissez-en un plus petit.
field-file-kind = Ce fichier n'est pas d'une sorte que ce champ accepte ({ $kinds }) ; son contenu a été vérifié, pas son nom.
field-file-again = Le formulaire avait une erreur, le fichier n'a donc pas été gardé : choisissez-le à nouveau.
field-file-hint = Jusqu'à { $size } { $unit ->
        [B] o
        [KB] Ko
       *[MB] Mo
    } ; { $kinds }.
file-size = { $size } { $unit ->
    [B] o
    [KB] Ko
   *[MB] Mo
}
decimal-separator = ,
doorway-fresh-offer = Si ce lien vous a été envoyé par e-mail, vous pouvez en demander un nouveau. Il part à l'adresse enregistrée, jamais à une autre.
doorway-fresh-button = M'envoyer un nouveau lien
doorway-fresh-title = Un nouveau lien
doorway-fresh-sent = Si ce lien était le vôtre, un nouveau est en route vers l'adresse enregistrée.

# Le code envoyé par e-mail avant une étape « | verify email ».
doorway-code-title = Vérifions que c'est vous
doorway-code-intro = Cette étape s'ouvre une fois saisi un code à six chiffres envoyé à votre adresse e-mail.
doorway-code-send = M'envoyer un code par e-mail
doorway-code-send-again = M'envoyer un nouveau code
doorway-code-sent = Un code a été envoyé à { $address }. Il est valable { $minutes ->
    [one] une minute
   *[other] { $minutes } minutes
} ; regardez dans vos courriers indésirables s'il n'est pas arrivé au bout d'une minute.
doorway-code-label = Code (6 chiffres)
doorway-code-submit = Continuer
doorway-code-wrong = Ce code n'est pas le bon. { $left ->
    [one] Encore un code erroné, et il sera bloqué.
   *[other] Encore { $left } codes erronés, et il sera bloqué.
}
doorway-code-locked = Trop de codes erronés : ce code ne fonctionne plus, même le bon. Demandez un nouveau code.
doorway-code-none = Aucun code n'attend : il a expiré au bout de { $minutes ->
    [one] une minute
   *[other] { $minutes } minutes
}, a déjà servi, ou aucun n'a été demandé. Demandez-en un nouveau.
doorway-code-sends-left = { $count ->
    [one] Encore un code peut être envoyé cette heure-ci.
   *[other] Encore { $count } codes peuvent être envoyés cette heure-ci.
}
doorway-code-too-many = { $max } codes ont été envoyés dans la dernière heure : vous pourrez en demander un autre dans { $minutes ->
    [one] une minute
   *[other] { $minutes } minutes
}.
doorway-code-no-address = Cette étape demande un code envoyé par e-mail, et aucune adresse n'est connue pour vous ici. Demandez à la personne qui vous a envoyé ce lien.

## Reçus (domain::receipts)
doorway-receipt-title = Votre reçu
doorway-receipt-help = Un reçu est un petit fichier signé par ce site qui dit ce que vous avez répondu et quand. Gardez-le : il prouve votre réponse même si vous n’avez plus ce lien. Il ne contient aucun lien.
doorway-receipt-download = Télécharger votre reçu
doorway-receipt-download-step = Télécharger votre reçu pour « { $step } »
doorway-receipt-check = Tout le monde peut le vérifier : c’est un jeton JSON signé (JWS, EdDSA) que toute bibliothèque JOSE vérifie avec les clés publiques de ce site, à l’adresse /.well-known/jwks.json.
