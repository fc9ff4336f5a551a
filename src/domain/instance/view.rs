//! An instance as it is shown: the admin page, the API's read and `orchestra instance show`
//! read it here, the same reads in the same order, and each renders it its own way.

use std::sync::Arc;

use crate::domain::lists::{self, HistoryPage};
use crate::domain::workflow::drawing::{Flow, Standing};
use crate::domain::workflow::history::Event;
use crate::domain::workflow::versions::Cache;
use crate::domain::workflow::{Definition, Participant, Step};
use crate::error::Error;
use crate::i18n::Lang;
use crate::store::instances::InstanceRow;
use crate::store::mails::ContactRow;
use crate::store::workflows::Naming;
use crate::store::{self, Db};

/// What a view holds besides the instance: a page of its history, and its contacts or not.
#[derive(Clone, Copy, Debug)]
pub struct ViewOptions {
    /// The history lines older than this one (the newest when `None`).
    pub history_before: Option<i64>,
    pub history_limit: i64,
    /// The participants' addresses: for those who may see them (an administrator, the token
    /// that gave them).
    pub contacts: bool,
}

/// One instance, read for showing.
#[derive(Debug)]
pub struct View {
    pub instance: InstanceRow,
    pub definition: Arc<Definition>,
    /// Its version's number (0 when the version is gone).
    pub version: i64,
    /// Its workflow's machine name, label (in the default language) and labels in other
    /// languages (`workflow_label_in`); `None` once the workflow is deleted.
    pub workflow_name: Option<String>,
    pub workflow_label: Option<String>,
    pub workflow_labels: Option<String>,
    /// Who still has something to answer, in the order they answer.
    pub participants_left: Vec<Participant>,
    pub history: HistoryPage,
    pub contacts: Option<Vec<ContactRow>>,
}

impl View {
    /// The view of instance `id`; `None` when there is no such instance.
    pub async fn read(
        db: &Db,
        versions: &Cache,
        id: i64,
        options: ViewOptions,
    ) -> Result<Option<View>, Error> {
        match store::instances::shown(db, id).await? {
            Some(s) => Ok(Some(
                Self::of(db, versions, s.instance, s.naming, options).await?,
            )),
            None => Ok(None),
        }
    }

    /// The view of an instance already read with its naming (the API reads it first, to check
    /// its reach). A small instance's view costs one more read, its history page: the page then
    /// holds the whole history, which says who has answered the current step.
    pub async fn of(
        db: &Db,
        versions: &Cache,
        instance: InstanceRow,
        naming: Naming,
        options: ViewOptions,
    ) -> Result<View, Error> {
        let definition = versions.get(db, instance.version_id).await?;
        let history = lists::history(
            db,
            instance.id,
            options.history_before,
            options.history_limit,
        )
        .await?;
        let whole = options.history_before.is_none() && history.older.is_none();
        // The whole history in hand tells the current step's answers apart only in round 0:
        // history lines shown carry no round, so an instance sent back reads them.
        let participants_left = if whole && instance.round == 0 {
            let answered: Vec<String> = history
                .lines
                .iter()
                .filter(|h| h.step_index == instance.step_index && h.event == Event::Answered)
                .map(|h| h.branch.clone())
                .collect();
            super::progress::left_given(&instance, &definition, &answered)
        } else {
            super::participants_left(db, &instance, &definition).await?
        };
        let contacts = if options.contacts {
            Some(store::mails::contacts_of(db, instance.id).await?)
        } else {
            None
        };
        Ok(View {
            instance,
            definition,
            version: naming.version_number.unwrap_or(0),
            workflow_name: naming.workflow_name,
            workflow_label: naming.workflow_label,
            workflow_labels: naming.workflow_labels,
            participants_left,
            history,
            contacts,
        })
    }

    /// Its workflow's label in `lang`; `None` once the workflow is deleted.
    pub fn workflow_label_in(&self, lang: Lang) -> Option<String> {
        crate::domain::workflow::labels::maybe_label_in(
            self.workflow_label.as_deref(),
            self.workflow_labels.as_deref(),
            lang,
        )
    }

    /// The step it waits at, with its index; `None` once it has ended.
    pub fn current_step(&self) -> Option<(usize, &Step)> {
        if self.instance.state.is_over() {
            return None;
        }
        let index = usize::try_from(self.instance.step_index).ok()?;
        self.definition.steps.get(index).map(|s| (index, s))
    }

    /// Its version's flow drawn with where it stands: its step, its state, and the steps it
    /// skipped that its history page tells (a long history's older pages are not read for it).
    pub fn flow(&self, lang: Lang) -> String {
        let standing = Standing {
            step: usize::try_from(self.instance.step_index).unwrap_or(0),
            state: self.instance.state,
            skipped: (self.history.lines.iter())
                .filter(|h| h.event == Event::Skipped)
                .filter_map(|h| usize::try_from(h.step_index).ok())
                .collect(),
        };
        let label = self.workflow_label_in(lang);
        Flow {
            definition: &self.definition,
            lang,
            name: label.as_deref().unwrap_or(&self.instance.subject_title),
            id: "flow",
            standing: Some(&standing),
            edges: &crate::domain::workflow::drawing::route_edges(&self.definition, lang),
        }
        .svg()
    }
}
