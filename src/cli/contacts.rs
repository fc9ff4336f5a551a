//! `contact erase EMAIL`: an address removed from every row that holds it, now.

use super::Out;
use crate::domain::retention::{self, NotAnAddress};
use crate::i18n::Message;
use crate::store::Db;

/// Erases the address and says how many rows changed, by kind. The address is printed
/// nowhere and logged nowhere: not in the counts, not in a refusal.
pub(super) async fn contact_erase(out: &Out, db: &Db, email: &str) -> Result<i32, sqlx::Error> {
    match retention::erase_contact(db, email).await? {
        Err(NotAnAddress) => Ok(out.err(Message::new("cli-contact-erase-invalid"))),
        Ok(done) => {
            println!(
                "{}",
                Message::new("cli-contact-erased")
                    .arg("rows", done.total().to_string())
                    .arg("contacts", done.contacts.to_string())
                    .arg("mails", done.mails.to_string())
                    .arg("texts", done.texts.to_string())
                    .render(out.lang)
            );
            Ok(0)
        }
    }
}
