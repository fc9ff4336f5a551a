//! Example workflows made on first start, so a newcomer can click through at once. Each shows
//! participants: a supplier and a reviewer on two links; a payer who fills the form and pays on
//! one; two parallel reviewers.

use crate::i18n::Lang;
use crate::store::{self, Db};

pub const EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "supplier_onboarding",
        "Supplier onboarding",
        "form@supplier: Supplier details | Company*, Contact email* (email), Yearly volume (number), Insurance certificate (file, pdf image), Notes (long) | help: Tell us who you are and attach your insurance certificate; a reviewer reads these answers next.\n\
         \x20 fr: Coordonnées du fournisseur | Société, Adresse e-mail du contact, Volume annuel, Attestation d'assurance, Remarques | help: Dites-nous qui vous êtes et joignez votre attestation d'assurance\u{202f}; une personne relira ces réponses ensuite.\n\
         review@reviewer: Check the supplier | show 1 | help: The supplier's answers and certificate are above; a rejection needs a reason.\n\
         \x20 fr: Vérifier le fournisseur | help: Les réponses et l'attestation du fournisseur figurent ci-dessus\u{202f}; un refus demande un motif.\n",
    ),
    (
        "contract_review",
        "Contract review",
        "review[legal,finance]: Approve the contract\n\
         \x20 fr: Approuver le contrat\n",
    ),
    (
        "order_payment",
        "Order payment",
        "form@payer: Delivery address | Name*, Address* (long), Email* (email)\n\
         \x20 fr: Adresse de livraison | Nom, Adresse, Adresse e-mail\n\
         payment@payer: Pay the order | 49.90 EUR\n\
         \x20 fr: Régler la commande\n",
    ),
];

/// The examples' labels in French (`workflows.labels`). Migration `0022` gives them to the
/// examples of a site made before, and a test checks it says the same.
pub const FRENCH_LABELS: &[(&str, &str)] = &[
    ("supplier_onboarding", "Intégration des fournisseurs"),
    ("contract_review", "Revue de contrat"),
    ("order_payment", "Paiement de commande"),
];

/// An example's other labels, as stored.
fn labels_of(name: &str) -> String {
    let french = FRENCH_LABELS.iter().find(|(n, _)| *n == name);
    super::labels::to_json(&french.map_or_else(Vec::new, |(_, l)| vec![(Lang::Fr, (*l).into())]))
}

/// A per-link limit that lets the shipped examples' busiest link through three times over
/// (reloads, a second try, a page opened twice).
pub fn suggested_per_link() -> u64 {
    EXAMPLES
        .iter()
        .filter_map(|(_, _, text)| super::Definition::parse(text).ok())
        .map(|d| d.requests_per_link())
        .max()
        .unwrap_or(2)
        * 3
}

/// The examples as earlier releases shipped them. A site whose example is still exactly that gets the new one as a new version on its
/// next start (`seed_examples`); running instances stay on the version they have.
const EARLIER: &[(&str, &str)] = &[
    // Before it asked for a certificate.
    (
        "supplier_onboarding",
        "form@supplier: Supplier details | Company*, Contact email* (email), Yearly volume (number), Notes (long) | help: Tell us who you are; a reviewer reads these answers next.\n\
         \x20 fr: Coordonnées du fournisseur | Société, Adresse e-mail du contact, Volume annuel, Remarques | help: Dites-nous qui vous êtes\u{202f}; une personne relira ces réponses ensuite.\n\
         review@reviewer: Check the supplier | show 1 | help: The supplier's answers are above; a rejection needs a reason.\n\
         \x20 fr: Vérifier le fournisseur | help: Les réponses du fournisseur figurent ci-dessus\u{202f}; un refus demande un motif.\n",
    ),
    (
        "supplier_onboarding",
        "form@supplier: Supplier details | Company*, Contact email* (email), Yearly volume (number), Notes (long)\n\
         review@reviewer: Check the supplier\n",
    ),
    (
        "contract_review",
        "review[legal,finance]: Approve the contract\n",
    ),
    (
        "order_payment",
        "form@payer: Delivery address | Name*, Address* (long), Email* (email)\n\
         payment@payer: Pay the order | 49.90 EUR\n",
    ),
];

/// Seeds the examples when there is no workflow at all.
pub async fn seed_examples(db: &Db) -> Result<(), sqlx::Error> {
    if store::workflows::count(db).await? > 0 {
        return upgrade_examples(db).await;
    }
    for (name, label, text) in EXAMPLES {
        let def = super::Definition::parse(text).expect("the shipped examples parse");
        store::workflows::create_labelled(db, name, label, &labels_of(name), &def.to_json())
            .await?;
    }
    Ok(())
}

/// Gives an example its shipped words when a site still has it exactly as an earlier release
/// made it; an example an administrator changed is left alone. (Their French labels came with
/// migration `0022`, once.)
async fn upgrade_examples(db: &Db) -> Result<(), sqlx::Error> {
    for (name, old) in EARLIER {
        let Some((_, label, text)) = EXAMPLES.iter().find(|(n, _, _)| n == name) else {
            continue;
        };
        let Some(row) = store::workflows::by_name(db, name).await? else {
            continue;
        };
        let old = super::Definition::parse(old).expect("the earlier examples parse");
        if row.label == *label && super::Definition::from_json(&row.definition) == Some(old) {
            let new = super::Definition::parse(text).expect("the shipped examples parse");
            store::workflows::save(db, row.id, label, &new.to_json()).await?;
            tracing::info!(workflow = %name, "example workflow given its French words");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shipped step and field has French words, and the review shows the supplier's form.
    #[test]
    fn the_examples_come_in_english_and_french() {
        for (name, label, text) in EXAMPLES {
            let french = super::super::labels::label_in(label, &labels_of(name), Lang::Fr);
            assert_ne!(french, *label, "{name} has a French label");
            let def = super::super::Definition::parse(text).unwrap();
            for step in &def.steps {
                assert_ne!(
                    step.title_in(Lang::Fr),
                    step.title,
                    "{name}: {}",
                    step.title
                );
                let mut i = 0;
                while let Some(label) = step.label_in(Lang::Fr, i) {
                    assert_ne!(Some(label), step.label_in(Lang::En, i), "{name}");
                    i += 1;
                }
            }
            assert_eq!(
                super::super::Definition::parse(&def.to_text()).unwrap(),
                def
            );
        }
        // The migration that gave a site made before its examples' French labels says these.
        for sql in [
            include_str!("../../../migrations/sqlite/0022_workflow_labels.sql"),
            include_str!("../../../migrations/postgres/0022_workflow_labels.sql"),
        ] {
            for (name, label, _) in EXAMPLES {
                let update = format!(
                    "labels = '{}'\n  WHERE name = '{name}' AND label = '{label}';",
                    labels_of(name)
                );
                assert!(sql.contains(&update), "{update}");
            }
        }
        let supplier = super::super::Definition::parse(EXAMPLES[0].2).unwrap();
        assert_eq!(supplier.steps[1].shows, [0]);
        for step in &supplier.steps {
            assert!(!step.help.is_empty());
            assert_ne!(step.help_in(Lang::Fr), step.help);
        }
    }
}
