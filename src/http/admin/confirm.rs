//! The page that asks before an admin action that cannot be taken back (delete, revoke,
//! disable), shared by the admin areas; it shows the refusal instead when the action cannot be
//! done.

use axum::http::StatusCode;
use axum::response::Response;

use crate::http::context::{PageContext, html};
use crate::i18n::Message;

#[derive(askama::Template)]
#[template(path = "admin/confirm.html")]
pub struct ConfirmPage {
    pub ctx: PageContext,
    pub title: String,
    pub message: String,
    pub confirm: String,
    pub cancel_url: String,
    /// Set when the action cannot be done: why, and no button.
    pub refusal: Option<String>,
}

impl ConfirmPage {
    /// The page asking `title`, explaining `message`, its button saying `confirm`, and its
    /// way back to `cancel_url`, in the page's language.
    pub fn new(
        ctx: PageContext,
        title: Message,
        message: Message,
        confirm: Message,
        cancel_url: impl Into<String>,
    ) -> Self {
        Self {
            title: ctx.msg(&title),
            message: ctx.msg(&message),
            confirm: ctx.msg(&confirm),
            cancel_url: cancel_url.into(),
            refusal: None,
            ctx,
        }
    }

    /// The page again, saying `why` the action cannot be done, without its button.
    pub fn refused(mut self, why: String) -> Response {
        self.refusal = Some(why);
        let mut response = html(&self);
        *response.status_mut() = StatusCode::CONFLICT;
        response
    }
}
