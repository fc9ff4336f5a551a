//! The store on a real database: SQLite by default, PostgreSQL when
//! `ORCHESTRA_TEST_POSTGRES_URL` is set (`.ci/run` does both). Every query in `src/store`
//! runs here, so a statement only one backend understands fails one of the two runs.

use std::collections::BTreeSet;

use orchestra::domain::workflow::InstanceState;
use orchestra::store::flood::CountRow;
use orchestra::store::instances::{Answer, Recorded};
use orchestra::store::{self, Db};

use crate::helpers;

/// A migrated, empty database (no seeded workflows, no keys).
async fn empty() -> (Db, helpers::TestDb) {
    let database = helpers::fresh_database().await;
    let db = Db::connect(&database.url)
        .await
        .expect("connect and migrate");
    (db, database)
}

async fn a_workflow(db: &Db, name: &str) -> i64 {
    store::workflows::create(db, name, "A workflow", r#"{"steps":[]}"#)
        .await
        .unwrap()
        .expect("a new name")
}

async fn an_instance(db: &Db) -> i64 {
    let workflow = a_workflow(
        db,
        &format!("w_{}", &orchestra::domain::keys::random_token()[..8]),
    )
    .await;
    let version = store::workflows::by_id(db, workflow)
        .await
        .unwrap()
        .unwrap()
        .version_id;
    store::instances::create(
        db,
        &store::instances::New {
            workflow_id: workflow,
            version_id: version,
            title: "The subject",
            body: "Its body",
            token: "token-1",
            started_by: "cli",
            actor: "cli",
            contacts: &[],
            first: Default::default(),
            mail_quota: None,
        },
        None,
    )
    .await
    .unwrap()
    .unwrap()
}

#[tokio::test]
async fn migrations_run_twice_without_harm() {
    let (db, database) = empty().await;
    drop(db);
    let again = Db::connect(&database.url).await.expect("a second start");
    again.ping().await.unwrap();
    assert_eq!(
        again.backend,
        if helpers::on_postgres() {
            store::Backend::Postgres
        } else {
            store::Backend::Sqlite
        }
    );
}

#[tokio::test]
async fn settings_are_written_read_and_overwritten() {
    let (db, _d) = empty().await;
    assert_eq!(
        store::settings::get(&db, "orchestra.site_name")
            .await
            .unwrap(),
        None
    );
    store::settings::put_all(
        &db,
        &[
            ("orchestra.site_name", "Flows".to_owned()),
            ("interaction.limits.total", "500".to_owned()),
        ],
    )
    .await
    .unwrap();
    store::settings::put_all(&db, &[("orchestra.site_name", "Flows & Co".to_owned())])
        .await
        .unwrap();
    assert_eq!(
        store::settings::get(&db, "orchestra.site_name")
            .await
            .unwrap()
            .as_deref(),
        Some("Flows & Co")
    );
    let mut all = store::settings::all(&db).await.unwrap();
    all.sort();
    assert_eq!(
        all,
        vec![
            ("interaction.limits.total".to_owned(), "500".to_owned()),
            ("orchestra.site_name".to_owned(), "Flows & Co".to_owned()),
        ]
    );
}

#[tokio::test]
async fn typed_settings_round_trip_through_the_store() {
    let (db, _d) = empty().await;
    let saved = orchestra::domain::settings::Settings::save(
        &db,
        &[
            ("orchestra.request_limits.enabled", "on"),
            ("interaction.limits.per_link", "30"),
        ],
    )
    .await
    .expect("valid values");
    let loaded = orchestra::domain::settings::Settings::load(&db)
        .await
        .unwrap();
    assert_eq!(loaded, saved);
    assert!(loaded.request_limits_enabled);
    assert_eq!(loaded.per_link, 30);
    let refused = orchestra::domain::settings::Settings::save(
        &db,
        &[
            ("interaction.limits.per_link", "31"),
            ("interaction.limits.total", "lots"),
        ],
    )
    .await;
    assert!(matches!(
        refused,
        Err(orchestra::error::Refusable::Refused(_))
    ));
    assert_eq!(
        orchestra::domain::settings::Settings::load(&db)
            .await
            .unwrap()
            .per_link,
        30,
        "a refused form saves none of its fields"
    );
}

#[tokio::test]
async fn an_administrator_name_is_taken_once() {
    let (db, _d) = empty().await;
    assert_eq!(store::admins::count(&db).await.unwrap(), 0);
    let id = store::admins::create(&db, "ada", "hash-1")
        .await
        .unwrap()
        .expect("created");
    assert_eq!(
        store::admins::create(&db, "ada", "hash-2").await.unwrap(),
        None
    );
    assert_eq!(store::admins::count(&db).await.unwrap(), 1);
    let ada = store::admins::by_name(&db, "ada").await.unwrap().unwrap();
    assert_eq!((ada.id, ada.password_hash.as_str()), (id, "hash-1"));
    store::admins::set_password(&db, id, "hash-3")
        .await
        .unwrap();
    let ada = store::admins::by_id(&db, id).await.unwrap().unwrap();
    assert_eq!(
        (ada.name.as_str(), ada.password_hash.as_str()),
        ("ada", "hash-3")
    );
    assert!(store::admins::by_name(&db, "bob").await.unwrap().is_none());
}

#[tokio::test]
async fn the_setup_token_makes_the_first_administrator_once() {
    let (db, _d) = empty().await;
    let now = store::now();
    store::admins::put_setup_token(&db, "old", now + 60)
        .await
        .unwrap();
    store::admins::put_setup_token(&db, "new", now + 60)
        .await
        .unwrap();
    assert!(
        !store::admins::setup_token_valid(&db, "old", now)
            .await
            .unwrap(),
        "replaced"
    );
    assert!(
        store::admins::setup_token_valid(&db, "new", now)
            .await
            .unwrap()
    );
    assert!(
        !store::admins::setup_token_valid(&db, "new", now + 60)
            .await
            .unwrap(),
        "expired"
    );
    assert_eq!(
        store::admins::create_first(&db, "old", "ada", "h")
            .await
            .unwrap(),
        None
    );
    assert!(
        store::admins::create_first(&db, "new", "ada", "h")
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        store::admins::create_first(&db, "new", "bob", "h")
            .await
            .unwrap(),
        None,
        "spent"
    );
    store::admins::put_setup_token(&db, "later", now + 60)
        .await
        .unwrap();
    assert_eq!(
        store::admins::create_first(&db, "later", "bob", "h")
            .await
            .unwrap(),
        None,
        "an administrator exists"
    );
    assert_eq!(store::admins::count(&db).await.unwrap(), 1);
}

#[tokio::test]
async fn sessions_load_until_they_expire_and_are_collected() {
    let (db, _d) = empty().await;
    let now = 1_800_000_000;
    assert!(
        store::sessions::create(&db, "s1", "{\"a\":1}", now + 10)
            .await
            .unwrap()
    );
    assert!(
        !store::sessions::create(&db, "s1", "{}", now + 10)
            .await
            .unwrap(),
        "id collision"
    );
    assert!(
        store::sessions::create(&db, "s2", "{}", now + 100)
            .await
            .unwrap()
    );
    assert!(
        store::sessions::create(&db, "s3", "{}", now + 100)
            .await
            .unwrap()
    );
    assert_eq!(
        store::sessions::load(&db, "s1", now).await.unwrap(),
        Some(("{\"a\":1}".to_owned(), now + 10))
    );
    assert_eq!(
        store::sessions::load(&db, "s1", now + 10).await.unwrap(),
        None,
        "expired"
    );
    store::sessions::save(&db, "s1", "{\"a\":2}", now + 20)
        .await
        .unwrap();
    assert_eq!(
        store::sessions::load(&db, "s1", now + 10).await.unwrap(),
        Some(("{\"a\":2}".to_owned(), now + 20)),
        "saving replaces data and expiry"
    );
    store::sessions::delete(&db, "s3").await.unwrap();
    assert_eq!(store::sessions::load(&db, "s3", now).await.unwrap(), None);
    assert_eq!(
        store::sessions::delete_expired(&db, now + 20)
            .await
            .unwrap(),
        1
    );
    assert_eq!(store::sessions::load(&db, "s1", now).await.unwrap(), None);
    assert!(
        store::sessions::load(&db, "s2", now)
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn workflows_are_created_updated_and_named_once() {
    let (db, _d) = empty().await;
    assert_eq!(store::workflows::count(&db).await.unwrap(), 0);
    let b = store::workflows::create(&db, "beta", "Beta", "{}")
        .await
        .unwrap()
        .unwrap();
    let a = store::workflows::create(&db, "alpha", "Alpha", "{}")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store::workflows::create(&db, "beta", "Other", "{}")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store::workflows::save(&db, b, "Beta two", "{\"steps\":[]}")
            .await
            .unwrap(),
        store::workflows::Saved::Version(2)
    );
    assert_eq!(
        store::workflows::save(&db, b, "Beta three", "{\"steps\":[]}")
            .await
            .unwrap(),
        store::workflows::Saved::LabelOnly,
        "the same definition makes no new version"
    );
    assert_eq!(
        store::workflows::save(&db, b + a + 100, "x", "{}")
            .await
            .unwrap(),
        store::workflows::Saved::NotFound
    );
    let listed: Vec<(i64, String, String)> = store::workflows::list(&db)
        .await
        .unwrap()
        .into_iter()
        .map(|w| (w.id, w.name, w.label))
        .collect();
    assert_eq!(
        listed,
        vec![
            (a, "alpha".to_owned(), "Alpha".to_owned()),
            (b, "beta".to_owned(), "Beta three".to_owned()),
        ]
    );
    let beta = store::workflows::by_name(&db, "beta")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(beta.definition, "{\"steps\":[]}");
    assert_eq!(beta.version, 2);
    let first = store::workflows::versions(&db, b).await.unwrap();
    assert_eq!(
        first.iter().map(|v| v.number).collect::<Vec<_>>(),
        [2, 1],
        "newest first"
    );
    let v1 = store::workflows::version(&db, first[1].id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(v1.definition, "{}", "a version never changes");
    assert_eq!(
        store::workflows::by_id(&db, a).await.unwrap().unwrap().name,
        "alpha"
    );
    assert_eq!(store::workflows::count(&db).await.unwrap(), 2);
}

#[tokio::test]
async fn workflows_are_listed_by_label_the_same_way_on_both_backends() {
    let (db, _d) = empty().await;
    for (name, label) in [
        ("c", "cherry"),
        ("b", "Banana"),
        ("a", "apple"),
        ("d", "Été"),
        ("e", "banana"),
    ] {
        store::workflows::create(&db, name, label, "{}")
            .await
            .unwrap()
            .unwrap();
    }
    let labels: Vec<String> = store::workflows::list(&db)
        .await
        .unwrap()
        .into_iter()
        .map(|w| w.label)
        .collect();
    assert_eq!(labels, ["apple", "Banana", "banana", "cherry", "Été"]);
}

#[tokio::test]
async fn the_examples_are_seeded_once() {
    let (db, _d) = empty().await;
    orchestra::domain::workflow::seed::seed_examples(&db)
        .await
        .unwrap();
    orchestra::domain::workflow::seed::seed_examples(&db)
        .await
        .unwrap();
    let names: BTreeSet<String> = store::workflows::list(&db)
        .await
        .unwrap()
        .into_iter()
        .map(|w| w.name)
        .collect();
    assert_eq!(
        names,
        ["contract_review", "order_payment", "supplier_onboarding"]
            .map(str::to_owned)
            .into()
    );
}

#[tokio::test]
async fn an_instance_keeps_its_subject_and_history() {
    let (db, _d) = empty().await;
    let id = an_instance(&db).await;
    let row = store::instances::by_id(&db, id).await.unwrap().unwrap();
    assert_eq!(
        (
            row.subject_title.as_str(),
            row.subject_body.as_str(),
            row.token.as_str()
        ),
        ("The subject", "Its body", "token-1")
    );
    assert_eq!((row.step_index, row.state.as_str()), (0, "active"));
    store::links::record(
        &db,
        &store::links::NewLink {
            instance: id,
            step: 0,
            hash: "hash-1",
            participant: "legal",
            expires: 1_900_000_000,
            issued_by: "cli",
            generation: 0,
        },
        None,
    )
    .await
    .unwrap()
    .unwrap();
    let history: Vec<(i64, String, String)> = store::instances::history(&db, id)
        .await
        .unwrap()
        .into_iter()
        .map(|h| (h.step_index, h.branch, h.event.as_str().to_owned()))
        .collect();
    assert_eq!(
        history,
        vec![
            (0, String::new(), "started".to_owned()),
            (0, String::new(), "link_issued".to_owned()),
        ]
    );
    let second = an_instance(&db).await;
    let recent: Vec<i64> = store::instances::recent(&db, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(recent, vec![second, id]);
    assert_eq!(store::instances::recent(&db, 1).await.unwrap().len(), 1);
    assert!(
        store::instances::by_id(&db, second + 1)
            .await
            .unwrap()
            .is_none()
    );
}

fn two_reviewers() -> Vec<String> {
    vec!["legal".to_owned(), "finance".to_owned()]
}

fn answer<'a>(instance: i64, step: i64, branch: &'a str, branches: &'a [String]) -> Answer<'a> {
    Answer {
        instance,
        step,
        branch,
        answer_json: r#"{"decision":"approve"}"#,
        branches,
        rejects: false,
        needed: branches.len(),
        step_title: "Approve",
        kind: "review",
        participant: branch,
        then: store::instances::Then {
            step: Some(step + 1),
            ..Default::default()
        },
        on_reject: None,
        rounds: 5,
        notify: &[],
        files: &[],
        by: Default::default(),
    }
}

#[tokio::test]
async fn a_step_with_two_branches_waits_for_both() {
    let (db, _d) = empty().await;
    let id = an_instance(&db).await;
    let branches = two_reviewers();
    let record = |branch: &'static str| {
        let db = db.clone();
        let branches = branches.clone();
        async move {
            store::instances::record_answer(&db, &answer(id, 0, branch, &branches))
                .await
                .unwrap()
        }
    };
    assert_eq!(record("legal").await, Recorded::Waiting);
    assert_eq!(
        record("legal").await,
        Recorded::Stale,
        "a branch answers once"
    );
    assert_eq!(
        store::instances::answered_branches(&db, id, 0)
            .await
            .unwrap(),
        vec!["legal".to_owned()]
    );
    assert_eq!(record("finance").await, Recorded::Advanced);
    assert_eq!(
        store::instances::by_id(&db, id)
            .await
            .unwrap()
            .unwrap()
            .step_index,
        1
    );
    assert_eq!(
        record("finance").await,
        Recorded::Stale,
        "the step moved on"
    );
    let history = store::instances::history(&db, id).await.unwrap();
    let answered: Vec<(i64, &str, &str)> = history
        .iter()
        .filter(|h| h.event.as_str() == "answered")
        .map(|h| (h.step_index, h.branch.as_str(), h.answer.as_str()))
        .collect();
    assert_eq!(
        answered,
        vec![
            (0, "legal", r#"{"decision":"approve"}"#),
            (0, "finance", r#"{"decision":"approve"}"#),
        ]
    );
}

#[tokio::test]
async fn parallel_branches_answered_at_once_advance_the_step_exactly_once() {
    let (db, _d) = empty().await;
    let branches = two_reviewers();
    for _ in 0..10 {
        let id = an_instance(&db).await;
        let legal = answer(id, 0, "legal", &branches);
        let finance = answer(id, 0, "finance", &branches);
        let (a, b) = tokio::join!(
            store::instances::record_answer(&db, &legal),
            store::instances::record_answer(&db, &finance),
        );
        let mut outcomes = vec![a.unwrap(), b.unwrap()];
        outcomes.sort_by_key(|o| format!("{o:?}"));
        assert_eq!(outcomes, vec![Recorded::Advanced, Recorded::Waiting]);
        assert_eq!(
            store::instances::by_id(&db, id)
                .await
                .unwrap()
                .unwrap()
                .step_index,
            1
        );
    }
}

#[tokio::test]
async fn one_branch_answered_twice_at_once_is_recorded_once() {
    let (db, _d) = empty().await;
    let branches = two_reviewers();
    let id = an_instance(&db).await;
    let one = answer(id, 0, "legal", &branches);
    let (a, b) = tokio::join!(
        store::instances::record_answer(&db, &one),
        store::instances::record_answer(&db, &one),
    );
    let mut outcomes = vec![a.unwrap(), b.unwrap()];
    outcomes.sort_by_key(|o| format!("{o:?}"));
    assert_eq!(outcomes, vec![Recorded::Stale, Recorded::Waiting]);
    assert_eq!(
        store::instances::answered_branches(&db, id, 0)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn the_last_step_completes_and_a_rejection_ends_the_instance() {
    let (db, _d) = empty().await;
    let single: Vec<String> = vec![String::new()];
    let done = an_instance(&db).await;
    let last = Answer {
        then: store::instances::Then {
            end: 1,
            ..Default::default()
        },
        ..answer(done, 0, "", &single)
    };
    assert_eq!(
        store::instances::record_answer(&db, &last).await.unwrap(),
        Recorded::Ended(InstanceState::Complete)
    );
    let row = store::instances::by_id(&db, done).await.unwrap().unwrap();
    assert_eq!((row.state.as_str(), row.step_index), ("complete", 1));
    assert_eq!(
        store::instances::record_answer(&db, &answer(done, 1, "", &single))
            .await
            .unwrap(),
        Recorded::Stale,
        "nothing is answered on a finished instance"
    );

    let branches = two_reviewers();
    let rejected = an_instance(&db).await;
    let no = Answer {
        rejects: true,
        ..answer(rejected, 0, "finance", &branches)
    };
    assert_eq!(
        store::instances::record_answer(&db, &no).await.unwrap(),
        Recorded::Ended(InstanceState::Rejected)
    );
    let row = store::instances::by_id(&db, rejected)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.state, InstanceState::Rejected);
    let events: Vec<String> = store::instances::history(&db, rejected)
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.event.as_str().to_owned())
        .collect();
    assert_eq!(events, ["started", "answered", "rejected"]);
}

#[tokio::test]
async fn revoking_all_links_replaces_the_token_and_marks_every_record() {
    let (db, _d) = empty().await;
    let id = an_instance(&db).await;
    store::links::record(
        &db,
        &store::links::NewLink {
            instance: id,
            step: 0,
            hash: "hash-a",
            participant: "legal",
            expires: 1_900_000_000,
            issued_by: "cli",
            generation: 0,
        },
        None,
    )
    .await
    .unwrap()
    .unwrap();
    store::links::record(
        &db,
        &store::links::NewLink {
            instance: id,
            step: 0,
            hash: "hash-b",
            participant: "finance",
            expires: 1_900_000_000,
            issued_by: "cli",
            generation: 0,
        },
        None,
    )
    .await
    .unwrap()
    .unwrap();
    // The same link issued twice is one record.
    store::links::record(
        &db,
        &store::links::NewLink {
            instance: id,
            step: 0,
            hash: "hash-b",
            participant: "finance",
            expires: 1_900_000_000,
            issued_by: "cli",
            generation: 0,
        },
        None,
    )
    .await
    .unwrap()
    .unwrap();
    let links = store::links::list(&db, id).await.unwrap();
    assert_eq!(links.len(), 2);
    assert!(
        store::links::revoke(&db, id, 0, links[0].id, "admin:ada")
            .await
            .unwrap()
    );
    assert!(
        !store::links::revoke(&db, id, 0, links[0].id, "admin:ada")
            .await
            .unwrap(),
        "a revoked link is revoked once"
    );
    assert!(
        store::links::revoke_all(&db, id, 0, "token-2", "cli")
            .await
            .unwrap()
    );
    let row = store::instances::by_id(&db, id).await.unwrap().unwrap();
    assert_eq!(row.token, "token-2");
    let revoked: Vec<Option<String>> = store::links::list(&db, id)
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.revoked_by)
        .collect();
    // Newest first: finance, revoked on its own; legal, by the revocation of all.
    assert_eq!(
        revoked,
        [Some("admin:ada".to_owned()), Some("cli".to_owned())]
    );
    assert!(
        !store::links::revoke_all(&db, id + 1, 0, "token-3", "cli")
            .await
            .unwrap()
    );
    let found = store::instances::for_link(&db, id, "hash-a")
        .await
        .unwrap()
        .unwrap();
    assert!(found.revoked_at.unwrap() > 0);
    let unknown = store::instances::for_link(&db, id, "hash-z")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(unknown.revoked_at, None, "a link without a record");
    // A missing instance reads the one before it in its place (past the newest, the newest),
    // decoded the same way, so that a refusal costs the same either way; the doorway keeps a
    // row only when its id matches.
    let newest = an_instance(&db).await;
    let stand_in = store::instances::for_link(&db, newest + 1000, "hash-a")
        .await
        .unwrap()
        .expect("a stand-in row");
    assert_eq!(
        stand_in.instance.id, newest,
        "the newest instance stands in"
    );
    let stand_in = store::instances::for_handle(&db, newest + 1000, "hash-a", 0)
        .await
        .unwrap()
        .expect("a stand-in row");
    assert_eq!(stand_in.instance.id, newest);
    // No instance has an id below 1, and none stands in for one.
    assert!(
        store::instances::for_link(&db, 0, "hash-a")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn payments_join_the_one_under_way_and_handles_are_collected_when_expired() {
    let (db, database) = empty().await;
    let id = an_instance(&db).await;
    let now = 1_800_000_000;
    let new = |reference| store::payments::NewPayment {
        reference,
        instance: id,
        step: 0,
        branch: "",
        participant: "payer",
        amount_cents: 4990,
        currency: "EUR",
    };
    let (first, second) = (new("ref-a"), new("ref-b"));
    let (a, b) = tokio::join!(
        store::payments::start(&db, &first, "h1", now + 60),
        store::payments::start(&db, &second, "h1", now + 60),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.id, b.id, "two starts at once make one payment");
    let c = store::payments::start(&db, &new("ref-c"), "h2", now + 600)
        .await
        .unwrap();
    assert_eq!(c.id, a.id, "a later start joins the payment under way");
    assert_eq!(
        store::payments::by_handle(&db, "h2", now)
            .await
            .unwrap()
            .unwrap()
            .id,
        a.id
    );
    assert!(
        store::payments::by_handle(&db, "h1", now + 60)
            .await
            .unwrap()
            .is_none(),
        "expired"
    );
    let pool = sqlx::AnyPool::connect(&database.url).await.unwrap();
    let mut tx = pool.begin().await.unwrap();
    let settled = store::payments::settle_in(&mut tx, &a.reference, "failed")
        .await
        .unwrap();
    assert!(settled.is_some());
    assert!(
        store::payments::settle_in(&mut tx, &a.reference, "paid")
            .await
            .unwrap()
            .is_none(),
        "a settled payment is settled once"
    );
    tx.commit().await.unwrap();
    let d = store::payments::start(&db, &new("ref-d"), "h3", now + 600)
        .await
        .unwrap();
    assert_ne!(d.id, a.id, "after a failure, a new payment");
    assert_eq!(
        store::payments::delete_expired_handles(&db, now + 60)
            .await
            .unwrap(),
        1
    );
}

#[tokio::test]
async fn the_site_keys_are_made_once_and_rotated() {
    let (db, _d) = empty().await;
    assert_eq!(store::keys::created_at(&db).await.unwrap(), None);
    let first = store::keys::load_or_create(&db).await.unwrap();
    let again = store::keys::load_or_create(&db).await.unwrap();
    assert_eq!(
        first.keyed_hash("t", "x"),
        again.keyed_hash("t", "x"),
        "made once"
    );
    assert!(store::keys::created_at(&db).await.unwrap().is_some());
    let rotated = orchestra::domain::rotation::rotate_keys(&db).await.unwrap();
    assert_ne!(first.keyed_hash("t", "x"), rotated.keyed_hash("t", "x"));
    let loaded = store::keys::load_or_create(&db).await.unwrap();
    assert_eq!(loaded.keyed_hash("t", "x"), rotated.keyed_hash("t", "x"));
}

fn count(event: &str, identifier: &str, bucket_start: i64, expiration: i64, n: i64) -> CountRow {
    CountRow {
        event: event.to_owned(),
        identifier: identifier.to_owned(),
        bucket_start,
        expiration,
        count: n,
    }
}

fn summary(rows: &[CountRow]) -> Vec<(String, String, i64, i64, i64)> {
    let mut out: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r.event.clone(),
                r.identifier.clone(),
                r.bucket_start,
                r.expiration,
                r.count,
            )
        })
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn flood_counts_add_up_per_node_and_bucket() {
    let (db, _d) = empty().await;
    let rows = [
        count("doorway", "a", 1000, 5000, 2),
        count("doorway", "b", 1000, 5000, 1),
    ];
    store::flood::add_counts(&db, "node-1", rows.iter())
        .await
        .unwrap();
    store::flood::add_counts(&db, "node-1", [count("doorway", "a", 1000, 5000, 3)].iter())
        .await
        .unwrap();
    store::flood::add_counts(&db, "node-2", [count("doorway", "a", 2000, 6000, 7)].iter())
        .await
        .unwrap();
    store::flood::add_counts(&db, "node-1", std::iter::empty::<store::flood::CountRow>())
        .await
        .unwrap();

    let seen_by_3 = store::flood::others_counts(&db, "node-3", 0, &[("doorway", "a")])
        .await
        .unwrap();
    assert_eq!(
        summary(&seen_by_3),
        vec![
            ("doorway".into(), "a".into(), 1000, 5000, 5),
            ("doorway".into(), "a".into(), 2000, 6000, 7),
        ]
    );
    let seen_by_1 =
        store::flood::others_counts(&db, "node-1", 0, &[("doorway", "a"), ("doorway", "b")])
            .await
            .unwrap();
    assert_eq!(
        summary(&seen_by_1),
        vec![("doorway".into(), "a".into(), 2000, 6000, 7)],
        "a node does not read its own rows back"
    );
    let live =
        store::flood::others_counts(&db, "node-2", 5000, &[("doorway", "a"), ("doorway", "b")])
            .await
            .unwrap();
    assert!(
        live.is_empty(),
        "expired rows are not counted: {:?}",
        summary(&live)
    );
    let other_event = store::flood::others_counts(&db, "node-3", 0, &[("login", "a")]).await;
    assert!(other_event.unwrap().is_empty());
}

#[tokio::test]
async fn flood_rows_are_collected_and_listed() {
    let (db, _d) = empty().await;
    let rows = [
        count("doorway", "a", 1000, 5000, 1),
        count("doorway", "b", 1000, 9000, 1),
        count("doorway-total", "all", 1000, 9000, 2),
        count("login", "a", 1000, 9000, 1),
    ];
    store::flood::add_counts(&db, "n", rows.iter())
        .await
        .unwrap();
    let mut ids = store::flood::identifiers(&db).await.unwrap();
    ids.sort();
    assert_eq!(
        ids,
        vec![
            ("doorway".into(), "a".into()),
            ("doorway".into(), "b".into()),
            ("doorway-total".into(), "all".into()),
            ("login".into(), "a".into()),
        ]
    );
    assert_eq!(store::flood::delete_expired(&db, 5000).await.unwrap(), 1);
    let mut ids = store::flood::identifiers(&db).await.unwrap();
    ids.sort();
    assert_eq!(
        ids,
        vec![
            ("doorway".into(), "b".into()),
            ("doorway-total".into(), "all".into()),
            ("login".into(), "a".into())
        ]
    );
}

#[tokio::test]
async fn large_counts_and_times_survive_the_round_trip() {
    // Milliseconds since 1970 do not fit in 32 bits: the columns must be 64-bit on both backends.
    let (db, _d) = empty().await;
    let far = 4_102_444_800_000_i64;
    store::flood::add_counts(
        &db,
        "n",
        [count("e", "i", far, far + 1, 3_000_000_000)].iter(),
    )
    .await
    .unwrap();
    let rows = store::flood::others_counts(&db, "m", far, &[("e", "i")])
        .await
        .unwrap();
    assert_eq!(
        summary(&rows),
        vec![("e".into(), "i".into(), far, far + 1, 3_000_000_000)]
    );
}

/// The flood table kept one row per key before it kept the counting table's cells: a server
/// started on such a database reads those rows into the keys' cells, and keeps them through its
/// syncs until they expire.
#[tokio::test]
async fn counts_stored_per_key_before_the_cells_hold_after_the_upgrade() {
    use orchestra::limits::flood::{Clock, FloodStore, SqlFlood, Tier, table::bucket_of};
    let (db, _d) = empty().await;
    let hour = std::time::Duration::from_secs(3600);
    let clock = Clock::manual(1_800_000_000_000);
    let key = "ab".repeat(32);
    let (bucket, width) = bucket_of(clock.now_ms(), hour);
    let expiration = (bucket + 1) * width + 3_600_000;
    let whole = count("doorway", &key, bucket * width, expiration, 5);
    store::flood::add_counts(&db, "the previous version", [whole].iter())
        .await
        .unwrap();

    let flood = SqlFlood::new(db.clone(), 1024, clock.clone());
    flood.warm_up().await.unwrap();
    let tiers = [Tier {
        identifier: &key,
        limit: 5,
    }];
    assert_eq!(flood.try_register("doorway", &tiers, hour), Err(0));
    let fresh = [Tier {
        identifier: "another key",
        limit: 5,
    }];
    assert_eq!(flood.try_register("doorway", &fresh, hour), Ok(()));
    // Asked of, so the sync reads what other processes stored in the key's cells.
    assert!(flood.count("doorway", &key, hour) >= 5);
    flood.sync().await.unwrap();
    assert_eq!(
        flood.try_register("doorway", &tiers, hour),
        Err(0),
        "a sync dropped the count carried over"
    );
    assert!(
        store::flood::identifiers(&db)
            .await
            .unwrap()
            .iter()
            .all(|(_, id)| id == &key || id.starts_with("c1024.")),
        "what this version writes is cells"
    );
    clock.advance(hour + hour / 10 + std::time::Duration::from_millis(1));
    assert_eq!(
        flood.try_register("doorway", &tiers, hour),
        Ok(()),
        "the carried count outlived its period"
    );
}
