//! The `config` commands: the site settings read and saved through the settings registry.

use super::Out;
use crate::domain::settings::{self, Settings};
use crate::i18n::Message;
use crate::store::Db;

pub(super) async fn config_get(out: &Out, db: &Db, key: &str) -> Result<i32, sqlx::Error> {
    match Settings::load(db).await?.get(key) {
        Some(v) => {
            println!("{v}");
            Ok(0)
        }
        None => Ok(out.err(Message::new("config-unknown-key").arg("key", key.to_owned()))),
    }
}

/// Saves one or more `KEY VALUE` pairs in one go: all of them, or none when one is refused.
pub(super) async fn config_set(out: &Out, db: &Db, pairs: &[&str]) -> Result<i32, sqlx::Error> {
    let mut values = Vec::new();
    for pair in pairs.chunks(2) {
        let [key, value] = pair else { continue };
        let Some(key) = settings::setting(key).map(|s| s.key) else {
            return Ok(out.err(Message::new("config-unknown-key").arg("key", (*key).to_owned())));
        };
        values.push((key, *value));
    }
    let cli = crate::domain::audit::Actor::Cli;
    match crate::domain::audit::save_settings(db, &cli, None, &values).await {
        Ok(saved) => {
            for (key, _) in &values {
                eprintln!(
                    "{}",
                    Message::new("config-saved")
                        .arg("key", *key)
                        .arg("value", saved.get(key).unwrap_or_default())
                        .render(out.lang)
                );
            }
            Ok(0)
        }
        Err(e) => {
            let errors = match e.refusal() {
                Ok(errors) => errors,
                Err(failure) => return Ok(out.fail(failure)),
            };
            let Some(error) = errors.into_iter().next() else {
                return Ok(out.err(Message::new("cli-failed")));
            };
            Ok(out.err(
                Message::new("config-refused")
                    .arg("key", error.key)
                    .arg("reason", error.message.render(out.lang)),
            ))
        }
    }
}

pub(super) async fn config_list(db: &Db) -> Result<i32, sqlx::Error> {
    let settings = Settings::load(db).await?;
    for setting in settings::REGISTRY {
        println!("{} = {}", setting.key, setting.get(&settings));
    }
    Ok(0)
}
