//! Example workflows made on first start, so a newcomer can click through at once. Each shows
//! participants: a supplier and a reviewer on two links; a payer who fills the form and pays on
//! one; two parallel reviewers.

use crate::store::{self, Db};

pub const EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "supplier_onboarding",
        "Supplier onboarding",
        "form@supplier: Supplier details | Company*, Contact email* (email), Yearly volume (number), Notes (long)\n\
         review@reviewer: Check the supplier\n",
    ),
    (
        "contract_review",
        "Contract review",
        "review[legal,finance]: Approve the contract\n",
    ),
    (
        "order_payment",
        "Order payment",
        "form@payer: Delivery address | Name*, Address* (long), Email* (email)\n\
         payment@payer: Pay the order | 49.90 EUR\n",
    ),
];

/// Seeds the examples when there is no workflow at all.
pub async fn seed_examples(db: &Db) -> Result<(), sqlx::Error> {
    if store::workflows::count(db).await? > 0 {
        return Ok(());
    }
    for (name, label, text) in EXAMPLES {
        let def = super::Definition::parse(text).expect("the shipped examples parse");
        store::workflows::create(db, name, label, &def.to_json()).await?;
    }
    Ok(())
}
