//! What an API token may do: its abilities (read, start, links, workflows), its reach (the instances it
//! started, or every instance) and optionally the workflows it may work with. Pure: the web,
//! the CLI and the store read and write it; none of them decides.
//!
//! Modelled on GitHub's fine-grained tokens and Stripe's restricted keys: a token names what it
//! may do and over what, and the default is the least that still serves an integration (every
//! ability, over the instances it started itself).

use crate::i18n::Message;

/// One thing a token may do. Each API call needs exactly one (docs/api.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ability {
    /// Read an instance: state, current step, participants left, history.
    Read,
    /// Start an instance.
    Start,
    /// Issue links on an instance, and revoke them.
    Links,
    /// Make workflows and save new versions of their definitions: changes what every later
    /// instance asks, so no token has it unless it is given.
    Workflows,
}

impl Ability {
    /// In the order they are stored and shown.
    pub const ALL: [Ability; 4] = [
        Ability::Read,
        Ability::Start,
        Ability::Links,
        Ability::Workflows,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Ability::Read => "read",
            Ability::Start => "start",
            Ability::Links => "links",
            Ability::Workflows => "workflows",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == word)
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of abilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Abilities(u8);

impl Abilities {
    /// What a token gets unless told otherwise: everything on instances, not the editing of
    /// definitions.
    pub const INSTANCES: Abilities = Abilities(0b111);
    pub const NONE: Abilities = Abilities(0);

    pub fn contains(self, ability: Ability) -> bool {
        self.0 & ability.bit() != 0
    }

    #[must_use]
    pub fn with(self, ability: Ability) -> Self {
        Self(self.0 | ability.bit())
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Ability> {
        Ability::ALL.into_iter().filter(move |a| self.contains(*a))
    }

    /// The names joined by `sep`, in `Ability::ALL`'s order.
    pub fn join(self, sep: &str) -> String {
        self.iter()
            .map(Ability::as_str)
            .collect::<Vec<_>>()
            .join(sep)
    }
}

/// Which instances a token reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Only the instances it started.
    Own,
    /// Every instance, those started by administrators and other tokens included.
    All,
}

impl Reach {
    pub const ALL: [Reach; 2] = [Reach::Own, Reach::All];

    pub fn as_str(self) -> &'static str {
        match self {
            Reach::Own => "own",
            Reach::All => "all",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == word)
    }
}

/// The written form of "every workflow", in `orchestra token list` and `--workflows`: no
/// machine name can be it.
pub const EVERY_WORKFLOW: &str = "*";

/// A workflow's machine name as workflows are made with (stored space-separated, so never a
/// space).
fn machine_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// A token's scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    pub abilities: Abilities,
    pub reach: Reach,
    /// Machine names; `None` for every workflow, those made later included.
    pub workflows: Option<Vec<String>>,
}

/// What a new token gets unless told otherwise: everything an integration needs over what it
/// starts itself, and nothing over anyone else's instances nor over the definitions.
impl Default for Scope {
    fn default() -> Self {
        Self {
            abilities: Abilities::INSTANCES,
            reach: Reach::Own,
            workflows: None,
        }
    }
}

/// Why an operator's scope was refused, and which part of it: `abilities`, `reach` or
/// `workflows` (the admin form's field, the CLI's option).
#[derive(Debug)]
pub struct ScopeError {
    pub field: &'static str,
    pub message: Message,
}

impl ScopeError {
    fn new(field: &'static str, message: Message) -> Self {
        Self { field, message }
    }
}

impl Scope {
    pub fn may(&self, ability: Ability) -> bool {
        self.abilities.contains(ability)
    }

    /// Whether the token may work with this workflow at all.
    pub fn covers(&self, workflow: &str) -> bool {
        self.workflows
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == workflow))
    }

    /// Whether token `token` reaches an instance of `workflow` started by `started_by` (`None`:
    /// by an administrator or the command line).
    pub fn reaches(&self, token: i64, started_by: Option<i64>, workflow: &str) -> bool {
        let reached = match self.reach {
            Reach::All => true,
            Reach::Own => started_by == Some(token),
        };
        reached && self.covers(workflow)
    }

    /// This scope with the parts an operator wrote or ticked: ability names, a reach, workflow
    /// machine names (none, or `*`, for every workflow). `None` for a part keeps this one's. Whether
    /// the workflows exist is the caller's to check (`api::unknown_workflow`).
    pub fn with_words<'a>(
        self,
        abilities: Option<impl IntoIterator<Item = &'a str>>,
        reach: Option<&str>,
        workflows: Option<impl IntoIterator<Item = &'a str>>,
    ) -> Result<Scope, ScopeError> {
        let mut scope = self;
        if let Some(words) = abilities {
            scope.abilities = Abilities::NONE;
            for word in words {
                let ability = Ability::parse(word).ok_or_else(|| {
                    ScopeError::new(
                        "abilities",
                        Message::new("token-ability-unknown").arg("value", word.to_owned()),
                    )
                })?;
                scope.abilities = scope.abilities.with(ability);
            }
            if scope.abilities.is_empty() {
                return Err(ScopeError::new(
                    "abilities",
                    Message::new("token-abilities-empty"),
                ));
            }
        }
        if let Some(word) = reach {
            scope.reach = Reach::parse(word).ok_or_else(|| {
                ScopeError::new(
                    "reach",
                    Message::new("token-reach-unknown").arg("value", word.to_owned()),
                )
            })?;
        }
        if let Some(names) = workflows {
            let mut list: Vec<String> = Vec::new();
            for name in names {
                if name == EVERY_WORKFLOW {
                    continue;
                }
                if !machine_name(name) {
                    return Err(ScopeError::new(
                        "workflows",
                        Message::new("token-workflow-unknown").arg("name", name.to_owned()),
                    ));
                }
                if !list.iter().any(|n| n == name) {
                    list.push(name.to_owned());
                }
            }
            scope.workflows = (!list.is_empty()).then_some(list);
        }
        Ok(scope)
    }

    /// The three columns it is stored in: abilities and workflows space-separated (names have
    /// no spaces), workflows `NULL` for every workflow.
    pub fn stored(&self) -> (String, &'static str, Option<String>) {
        (
            self.abilities.join(" "),
            self.reach.as_str(),
            self.workflows.as_ref().map(|w| w.join(" ")),
        )
    }

    /// The scope stored in those columns; an error names what it could not read.
    pub fn from_stored(
        abilities: &str,
        reach: &str,
        workflows: Option<&str>,
    ) -> Result<Scope, String> {
        let mut set = Abilities::NONE;
        for word in abilities.split_ascii_whitespace() {
            set = set.with(Ability::parse(word).ok_or_else(|| format!("ability {word:?}"))?);
        }
        Ok(Scope {
            abilities: set,
            reach: Reach::parse(reach).ok_or_else(|| format!("reach {reach:?}"))?,
            workflows: workflows.map(|w| w.split_ascii_whitespace().map(str::to_owned).collect()),
        })
    }

    /// The workflows as the CLI prints them: comma-separated, or `*` for every workflow.
    pub fn workflows_text(&self) -> String {
        self.workflows
            .as_ref()
            .map_or_else(|| EVERY_WORKFLOW.to_owned(), |w| w.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_WORDS: Option<[&str; 0]> = None;

    #[test]
    fn a_new_token_has_every_instance_ability_over_what_it_started_in_every_workflow() {
        let scope = Scope::default();
        assert!(
            [Ability::Read, Ability::Start, Ability::Links]
                .iter()
                .all(|a| scope.may(*a))
        );
        assert!(
            !scope.may(Ability::Workflows),
            "editing definitions is given, never default"
        );
        assert!(scope.reaches(7, Some(7), "any"));
        assert!(!scope.reaches(7, Some(8), "any"), "another token's");
        assert!(!scope.reaches(7, None, "any"), "an administrator's");
    }

    #[test]
    fn reach_all_and_a_workflow_list_both_bound_what_a_token_reaches() {
        let scope = Scope::default()
            .with_words(
                Some(["read"]),
                Some("all"),
                Some(["contract_review", "contract_review"]),
            )
            .unwrap();
        assert!(scope.may(Ability::Read) && !scope.may(Ability::Start));
        assert!(scope.reaches(7, None, "contract_review"));
        assert!(scope.reaches(7, Some(8), "contract_review"));
        assert!(!scope.reaches(7, Some(7), "supplier_onboarding"));
        assert_eq!(scope.workflows.as_deref().map(<[String]>::len), Some(1));
    }

    #[test]
    fn a_scope_is_stored_and_read_back_unchanged() {
        for scope in [
            Scope::default(),
            Scope::default()
                .with_words(Some(["links", "read"]), Some("all"), Some(["a", "b_2"]))
                .unwrap(),
            Scope::default()
                .with_words(Some(["workflows"]), None, NO_WORDS)
                .unwrap(),
            Scope::default()
                .with_words(NO_WORDS, None, Some(["*"]))
                .unwrap(),
        ] {
            let (abilities, reach, workflows) = scope.stored();
            assert_eq!(
                Scope::from_stored(&abilities, reach, workflows.as_deref()),
                Ok(scope)
            );
        }
        assert_eq!(Scope::default().stored().0, "read start links");
        assert!(Scope::from_stored("read admin", "own", None).is_err());
        assert!(Scope::from_stored("read", "mine", None).is_err());
    }

    #[test]
    fn the_parts_not_given_keep_what_the_scope_had() {
        let base = Scope::default()
            .with_words(Some(["read"]), Some("all"), Some(["a"]))
            .unwrap();
        let changed = base.clone().with_words(NO_WORDS, Some("own"), NO_WORDS);
        assert_eq!(
            changed.unwrap(),
            Scope {
                reach: Reach::Own,
                ..base
            }
        );
    }

    #[test]
    fn an_operators_bad_word_names_its_field() {
        let field = |r: Result<Scope, ScopeError>| r.unwrap_err().field;
        assert_eq!(
            field(Scope::default().with_words(Some(["write"]), None, NO_WORDS)),
            "abilities"
        );
        assert_eq!(
            field(Scope::default().with_words(Some([]), None, NO_WORDS)),
            "abilities"
        );
        assert_eq!(
            field(Scope::default().with_words(NO_WORDS, Some("everything"), NO_WORDS)),
            "reach"
        );
        assert_eq!(
            field(Scope::default().with_words(NO_WORDS, None, Some(["Bad Name"]))),
            "workflows"
        );
    }
}
