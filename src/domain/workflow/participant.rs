//! Who answers a step: a name such as `supplier`, `reviewer` or `payer`. A link is issued for
//! one participant of an instance and answers that participant's steps, nothing else.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::domain::capability::valid_branch_name;

/// A participant's name: the alphabet and length of a link's branch field, which carries it.
/// The default participant answers the steps that name none; its links carry no branch, so
/// links issued before participants existed keep answering what they answered.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Participant(String);

impl Participant {
    pub const DEFAULT: &'static str = "default";

    pub fn parse(name: &str) -> Option<Self> {
        valid_branch_name(name).then(|| Self(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_default(&self) -> bool {
        self.0 == Self::DEFAULT
    }

    /// The participant a link's branch field names.
    pub fn from_claim(branch: Option<&str>) -> Option<Self> {
        match branch {
            None => Some(Self::default()),
            Some(b) => Self::parse(b),
        }
    }

    /// The branch field of a link for this participant.
    pub fn claim(&self) -> Option<String> {
        (!self.is_default()).then(|| self.0.clone())
    }
}

impl Default for Participant {
    fn default() -> Self {
        Self(Self::DEFAULT.to_owned())
    }
}

impl TryFrom<String> for Participant {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        if valid_branch_name(&name) {
            Ok(Self(name))
        } else {
            Err(format!("not a participant name ({} bytes)", name.len()))
        }
    }
}

impl From<Participant> for String {
    fn from(p: Participant) -> String {
        p.0
    }
}

impl PartialEq<str> for Participant {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl fmt::Display for Participant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_without_a_branch_is_the_default_participant_and_back() {
        let default = Participant::from_claim(None).unwrap();
        assert!(default.is_default());
        assert_eq!(default.claim(), None);
        let legal = Participant::from_claim(Some("legal")).unwrap();
        assert_eq!(legal.claim().as_deref(), Some("legal"));
        assert!(Participant::from_claim(Some("Legal")).is_none());
    }

    #[test]
    fn a_definition_saved_before_participants_goes_to_the_default_one() {
        let old = r#"{"steps":[{"title":"Check","branches":[],"interaction":{"kind":"review"}}]}"#;
        let def = super::super::Definition::from_json(old).unwrap();
        assert!(def.steps[0].participant.is_default());
        assert_eq!(def.steps[0].branch_of(&Participant::default()), Some(""));
        assert_eq!(
            def.steps[0].branch_of(&Participant::parse("legal").unwrap()),
            None
        );
    }
}
