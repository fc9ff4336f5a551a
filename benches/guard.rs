//! Criterion micro-benchmarks of the doorway's pieces: `cargo bench --bench guard`.
//!
//! - the guard's decision on the memory backend (allowed, and refused for a hammered link);
//! - the keyed hash that names a caller (what the guard layer pays before counting);
//! - a provider notice's signature check, against its naming and counting;
//! - a capability link's verification (what a refused request never pays);
//! - the doorway through the whole router on SQLite: a good link resolved and rendered, and a
//!   hammered link refused, each as one `oneshot` request with every layer in place.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use criterion::{Criterion, criterion_group, criterion_main};
use orchestra::domain::capability::{self, Claims, Kind};
use orchestra::domain::keys::SiteKeys;
use orchestra::domain::settings::Settings;
use orchestra::domain::site::Snapshot;
use orchestra::limits::flood::{Backend, Clock, MemoryFlood};
use orchestra::limits::guard::{Address, FloodGuard, Limits};
use tower::ServiceExt;

const HOUR: Duration = Duration::from_secs(3600);

fn guard(c: &mut Criterion) {
    let guard = FloodGuard::new(Arc::new(MemoryFlood::new(1 << 16, Clock::system())));
    let open = Limits {
        enabled: true,
        per_caller: 1_000_000,
        total: 1_000_000_000,
        period: HOUR,
    };
    let caller = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    c.bench_function("guard decision, allowed (memory)", |b| {
        b.iter(|| guard.check(black_box(Address::Doorway), black_box(caller), &open))
    });
    let tight = Limits {
        per_caller: 5,
        ..open
    };
    let hammered = "0f0e0d0c0b0a09080706050403020100f0e0d0c0b0a09080706050403020100f";
    for _ in 0..10 {
        guard.check(Address::Doorway, hammered, &tight);
    }
    c.bench_function("guard decision, hammered link refused (memory)", |b| {
        b.iter(|| guard.check(black_box(Address::Doorway), black_box(hammered), &tight))
    });

    let snapshot = Snapshot::new(Settings::default(), SiteKeys::generate());
    let link = "l.42..1900000000.5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592";
    c.bench_function("caller id: keyed hash of a link", |b| {
        b.iter(|| snapshot.caller_id(black_box(link)))
    });
    // The choices for the caller's keyed hash (docs/performance.md), each of the same link.
    {
        use hmac::{Hmac, Mac};
        use siphasher::sip128::{SipHasher13, SipHasher24};
        let hmac = Hmac::<sha2::Sha256>::new_from_slice(&[7; 32]).expect("a key");
        c.bench_function("keyed hash choice: HMAC-SHA256 (before)", |b| {
            b.iter(|| {
                let mut mac = hmac.clone();
                mac.update(black_box(link).as_bytes());
                mac.finalize().into_bytes()
            })
        });
        let sip24 = [
            SipHasher24::new_with_keys(1, 2),
            SipHasher24::new_with_keys(3, 4),
        ];
        c.bench_function("keyed hash choice: 2 x SipHash-2-4-128 (now)", |b| {
            b.iter(|| sip24.map(|h| h.hash(black_box(link).as_bytes()).as_u128()))
        });
        c.bench_function("keyed hash choice: 1 x SipHash-2-4-128", |b| {
            b.iter(|| sip24[0].hash(black_box(link).as_bytes()).as_u128())
        });
        let sip13 = SipHasher13::new_with_keys(1, 2);
        c.bench_function("keyed hash choice: 1 x SipHash-1-3-128", |b| {
            b.iter(|| sip13.hash(black_box(link).as_bytes()).as_u128())
        });
    }
}

/// What a provider notice costs before and after it is counted: the signature is checked
/// before the count (signed and forged notices are counted apart), so its HMAC is weighed
/// against the count and the reading that the count needs anyway.
fn notice(c: &mut Criterion) {
    use orchestra::domain::interaction::payment;
    let keys = SiteKeys::generate();
    let small = br#"{"payment":"3f2a9c81d04b5e6f7a8b9c0d1e2f3a4b","outcome":"paid","timestamp":1900000000}"#;
    let large = [b'x'; payment::MAX_NOTICE_BYTES];
    let forged = "0".repeat(64);
    c.bench_function("notice: signature checked, forged, 86-byte body", |b| {
        b.iter(|| payment::verify(&keys, black_box(small), black_box(&forged)).is_some())
    });
    c.bench_function("notice: signature checked, forged, 4 KiB body", |b| {
        b.iter(|| payment::verify(&keys, black_box(&large), black_box(&forged)).is_some())
    });
    c.bench_function("notice: payment named (JSON), 86-byte body", |b| {
        b.iter(|| payment::payment_named(black_box(small)))
    });
    c.bench_function("notice: keyed hash of the payment", |b| {
        b.iter(|| {
            keys.keyed_hash(
                "notice-caller",
                black_box("3f2a9c81d04b5e6f7a8b9c0d1e2f3a4b"),
            )
        })
    });
}

fn verify(c: &mut Criterion) {
    let keys = SiteKeys::generate();
    let token = orchestra::domain::keys::random_token();
    let claims = Claims {
        kind: Kind::Link,
        instance: 42,
        branch: Some("legal".to_owned()),
        expires: 1_900_000_000,
    };
    let link = capability::sign(&keys, &claims, &token);
    c.bench_function("capability link: parse and verify", |b| {
        b.iter(|| {
            let parsed = capability::parse(black_box(&link)).expect("a link");
            assert!(capability::verify(&keys, &parsed, &token, 1_800_000_000));
        })
    });
}

fn doorway(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let url = format!("sqlite:{}", dir.path().join("orchestra.db").display());
    let (app, db, state, good, hammered) = runtime.block_on(async {
        let db = orchestra::open(&url).await.expect("open the database");
        let clock = Clock::system();
        let flood = Arc::new(MemoryFlood::new(1 << 16, clock.clone()));
        let state = orchestra::build_state(db.clone(), flood, Backend::Memory, clock.clone())
            .await
            .expect("the state");
        Settings::save(
            &db,
            &[
                ("orchestra.request_limits.enabled", "true"),
                ("interaction.limits.per_link", "1000000"),
                ("interaction.limits.total", "1000000000"),
            ],
        )
        .await
        .expect("valid settings");
        state.site.refresh().await;
        let keys = orchestra::store::keys::load_or_create(&db)
            .await
            .expect("keys");
        let workflow = orchestra::store::workflows::by_name(&db, "supplier_onboarding")
            .await
            .expect("read")
            .expect("a seeded workflow");
        let id = orchestra::domain::instance::start(
            &db,
            &orchestra::domain::instance::Start {
                ..orchestra::domain::instance::Start::new(
                    workflow.id,
                    "Bench",
                    &orchestra::domain::instance::Actor::CommandLine,
                )
            },
        )
        .await
        .expect("started");
        let now = clock.now_secs();
        let order = orchestra::domain::instance::Order {
            participant: "supplier",
            ttl: 86_400,
            now,
            by: &orchestra::domain::instance::Actor::CommandLine,
            daily_cap: None,
        };
        let good = orchestra::domain::instance::issue(&db, &state.versions, &keys, "", id, &order)
            .await
            .expect("issued")
            .url;
        let app = orchestra::http::app(state.clone(), false);
        (app, db, state, good, "/interaction/l.1..1.00".to_owned())
    });
    let get = |path: &str| {
        Request::get(path)
            .header("accept-language", "en")
            .body(Body::empty())
            .expect("a request")
    };
    runtime.block_on(async {
        let first = app.clone().oneshot(get(&good)).await.expect("answered");
        assert_eq!(first.status(), 200, "the good link is not answered");
    });
    c.bench_function("doorway: good link resolved and rendered (SQLite)", |b| {
        b.to_async(&runtime)
            .iter(|| async { app.clone().oneshot(get(&good)).await.expect("answered") })
    });
    // The same app with a per-link limit of 5, spent on a made-up link first.
    runtime.block_on(async {
        Settings::save(&db, &[("interaction.limits.per_link", "5")])
            .await
            .expect("valid settings");
        state.site.refresh().await;
        loop {
            let r = app.clone().oneshot(get(&hammered)).await.expect("answered");
            if r.status() == 429 {
                break;
            }
        }
    });
    c.bench_function("doorway: hammered link refused (whole router)", |b| {
        b.to_async(&runtime)
            .iter(|| async { app.clone().oneshot(get(&hammered)).await.expect("answered") })
    });
}

criterion_group!(benches, guard, notice, verify, doorway);
criterion_main!(benches);
