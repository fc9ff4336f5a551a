//! Example workflows made on first start, so a newcomer can click through at once.

use crate::store::{self, Db};

pub const EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "supplier_onboarding",
        "Supplier onboarding",
        "form: Supplier details | Company*, Contact email* (email), Yearly volume (number), Notes (long)\n\
         review: Check the supplier\n",
    ),
    (
        "contract_review",
        "Contract review",
        "review[legal,finance]: Approve the contract\n",
    ),
    (
        "order_payment",
        "Order payment",
        "form: Delivery address | Name*, Address* (long), Email* (email)\n\
         payment: Pay the order | 49.90 EUR\n",
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
