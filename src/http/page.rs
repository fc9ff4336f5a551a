//! The one context every page carries, as plain data: language, CSRF token, flash message,
//! who is signed in. Filled from a request by `http::context`; error pages make a plain one.

use std::borrow::Cow;

use crate::i18n::{Lang, Message, text, tr};

#[derive(Clone, Debug, Default)]
pub struct PageContext {
    pub lang: Lang,
    pub site_name: String,
    pub csrf: String,
    pub flash: Option<String>,
    /// How the flash message is styled: `success`, `warning` or `error`.
    pub flash_kind: FlashKind,
    /// The signed-in administrator's name, on admin pages.
    pub admin: Option<String>,
    /// The current path, for links that come back here (never set on doorway pages).
    pub path: String,
    /// The current query without `lang=`, so the language switch keeps the rest of it.
    pub query: String,
    /// The signed-in administrator's role, on admin pages: which forms a page shows.
    pub role: Option<crate::domain::roles::Role>,
}

/// The kind of a flash message, which styles it and its role.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlashKind {
    #[default]
    Success,
    Warning,
    Error,
}

impl FlashKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

impl PageContext {
    /// Whether the administrator may change the work (workflows, instances, links, webhooks).
    pub fn can_edit(&self) -> bool {
        self.role >= Some(crate::domain::roles::Role::Editor)
    }

    /// Whether the administrator may change the site (administrators, keys, settings, tokens).
    pub fn is_owner(&self) -> bool {
        self.role == Some(crate::domain::roles::Role::Owner)
    }

    /// A context without a session: doorway pages and error pages.
    pub fn plain(lang: Lang) -> Self {
        Self {
            lang,
            site_name: "Orchestra".into(),
            ..Self::default()
        }
    }

    pub fn t(&self, id: &str) -> String {
        tr(self.lang, id, &[])
    }

    /// A message without arguments, borrowed when it is plain text (`i18n::text`): what
    /// templates show, so a page's labels cost no allocation each.
    pub fn text(&self, id: &str) -> Cow<'static, str> {
        text(self.lang, id)
    }

    pub fn msg(&self, message: &Message) -> String {
        message.render(self.lang)
    }

    pub fn lang_code(&self) -> &'static str {
        self.lang.code()
    }

    /// The link to this page in another language: the query kept, `lang=` replaced.
    pub fn lang_href(&self, code: &str) -> String {
        if self.query.is_empty() {
            format!("?lang={code}")
        } else {
            format!("?{}&lang={code}", self.query)
        }
    }

    /// Whether a top navigation item is the current page or one of its children.
    pub fn in_section(&self, prefix: &str) -> bool {
        if prefix == "/admin" {
            return self.path == "/admin";
        }
        self.path == prefix || self.path.starts_with(&format!("{prefix}/"))
    }

    /// A success is announced politely; a warning or an error at once.
    pub fn flash_role(&self) -> &'static str {
        match self.flash_kind {
            FlashKind::Success => "status",
            FlashKind::Warning | FlashKind::Error => "alert",
        }
    }

    /// The breadcrumbs above the current page, read from its path: (href, label). The page
    /// itself is the last crumb, which its template names.
    pub fn crumbs(&self) -> Vec<(String, String)> {
        let parts: Vec<&str> = self.path.trim_matches('/').split('/').collect();
        let mut out = Vec::new();
        if parts.first() != Some(&"admin") || parts.len() < 2 {
            return out;
        }
        out.push(("/admin".to_owned(), self.t("nav-dashboard")));
        match parts[1] {
            "workflows" | "instances" => {
                let (section, list, one) = if parts[1] == "workflows" {
                    ("/admin/workflows", "nav-workflows", "crumb-workflow")
                } else {
                    ("/admin/instances", "nav-instances", "crumb-instance")
                };
                if parts.len() >= 3 {
                    out.push((section.to_owned(), self.t(list)));
                }
                if parts.len() >= 4
                    && let Some(id) = parts
                        .get(2)
                        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
                {
                    let label = self.msg(&Message::new(one).arg("id", (*id).to_owned()));
                    out.push((format!("{section}/{id}"), label));
                }
            }
            "admins" if parts.len() >= 3 => {
                out.push(("/admin/admins".to_owned(), self.t("nav-admins")));
            }
            "webhooks" if parts.len() >= 3 => {
                out.push(("/admin/webhooks".to_owned(), self.t("nav-webhooks")));
            }
            "config" if parts.len() >= 4 => {
                out.push(("/admin/config/orchestra".to_owned(), self.t("nav-settings")));
            }
            _ => {}
        }
        out
    }

    /// The other languages, for the switcher: (code, native name).
    pub fn languages(&self) -> Vec<(&'static str, &'static str, bool)> {
        Lang::ALL
            .iter()
            .map(|l| (l.code(), l.native_name(), *l == self.lang))
            .collect()
    }
}
