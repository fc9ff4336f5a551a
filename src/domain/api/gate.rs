//! Who gets past the API's gate, decided with no web in it: the failed authentications an
//! address may make, the tokens this process already let in, the token's bucket and a
//! request's signature. `http::api::gate` reads the headers, asks these, and answers.
//!
//! Order of work: the failure limit (which, once passed, puts the token's read in line for the
//! one turn at the database addresses past their limit share), the token (one keyed hash and
//! an indexed read, or none when this process read it within `api::FRESH`), then the bucket,
//! then the signature when one is sent, so a bad signature has spent its request before its
//! key is looked up.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use super::{Seen, Signature, Signed, TokenKey};
use crate::domain::login;
use crate::domain::site::Snapshot;
use crate::error::Error;
use crate::limits::bucket::{Buckets, Policy, Verdict};
use crate::limits::flood::Clock;
use crate::limits::guard::{Address, Decision, FloodGuard, Limits, TOTAL};
use crate::store::{self, Db, api::TokenRow};

/// What the gate decides with: the process's shared parts and the settings it decides under.
pub struct Gate<'a> {
    pub db: &'a Db,
    pub guard: &'a FloodGuard,
    pub seen: &'a Seen,
    pub buckets: &'a Buckets,
    pub snapshot: &'a Snapshot,
    pub clock: &'a Clock,
}

/// What a request shows the gate.
pub struct Knock<'a> {
    /// The bearer's credentials (empty when none).
    pub bearer: &'a str,
    /// Its keyed hash, when the fast refusal made it already.
    pub named: Option<TokenKey>,
    /// The client's address, under which failures are counted.
    pub client: IpAddr,
    /// Whether the request names an integrator key, so will be checked for a signature.
    pub signed: bool,
}

/// Why a request is not let in.
#[derive(Debug)]
pub enum Refusal {
    /// Too many failed authentications from the client's address, counted over this period.
    TooManyFailures(Duration),
    /// No token, or one this site does not know (or no longer).
    Unauthorized,
    /// The token's bucket is empty.
    RateLimited(Policy, Verdict),
    /// The signature is unknown, tampered, stale or replayed.
    BadSignature,
    /// A failure of ours.
    Failed(Error),
}

impl From<Error> for Refusal {
    fn from(e: Error) -> Self {
        Refusal::Failed(e)
    }
}

/// A token let in so far, with what the gate needs to count a later failure (a bad signature).
pub struct Admitted {
    pub token: Arc<TokenRow>,
    /// The bucket's policy and verdict, when the request limit is on: said on the answer.
    pub limited: Option<(Policy, Verdict)>,
    failures: Failures,
}

/// The failed authentications of one client address, under the sign-in's per-address limit.
struct Failures {
    limits: Limits,
    counting: bool,
    client: IpAddr,
    /// The address's keyed hash, when it was made already.
    address: Option<String>,
}

impl Gate<'_> {
    /// Authenticates the token and takes one request from its bucket.
    pub async fn admit(&self, knock: &Knock<'_>) -> Result<Admitted, Refusal> {
        let snapshot = self.snapshot;
        // A token this site does not know costs a keyed hash and an indexed read. Failures are
        // counted per client address; past the limit a token is still read, so a valid one is
        // never refused for its neighbours' failures, but those reads wait in line for one turn
        // at the database that every address past its limit shares (`Seen::past_limit_turn`),
        // and a token that is not there gets the limit's refusal. A request with no token to
        // read is refused at once. Counted by the guard like the sign-in's failures:
        // report-only, store faults, the metrics and the sizing chart apply to them as to every
        // other guarded address.
        let limits = snapshot.settings.limits_of(Address::ApiAuthFailure);
        let policy = snapshot.settings.policy_of(Address::ApiAuthFailure);
        let counting = FloodGuard::is_counting(&limits);
        // Named as the fast refusal names it, so `Seen` holds what it seeks.
        let key = knock.named.or_else(|| snapshot.token_key(knock.bearer));
        let known = key.is_some_and(|key| self.seen.read(&key, |_| ()).is_some());
        let mut failures = Failures {
            limits,
            counting,
            client: knock.client,
            // A token this process let in costs no address hash and no count.
            address: (counting && !known).then(|| self.address_of(knock.client)),
        };
        let past_limit = failures.address.as_ref().is_some_and(|address| {
            let decision = self.guard.allows_as(
                Address::ApiAuthFailure,
                address,
                TOTAL,
                &failures.limits,
                policy,
            );
            matches!(decision, Decision::Refused { .. })
        });
        let too_many = || Refusal::TooManyFailures(limits.period);
        let Some(key) = key else {
            if past_limit {
                return Err(too_many());
            }
            return Err(self.failed(&mut failures, Refusal::Unauthorized));
        };
        // A token read within `api::FRESH` is let in from memory: its revocation by another
        // process takes effect here at most that late.
        let now = self.clock.now_ms();
        let token = match self.seen.fresh(&key, now) {
            Some(token) => token,
            None => {
                let turn = match past_limit {
                    true => Some(self.seen.past_limit_turn().await),
                    false => None,
                };
                let read = super::authenticate_hash(self.db, &super::stored_hash(&key)).await?;
                drop(turn);
                let Some(token) = read else {
                    self.seen.forget(&key);
                    if past_limit {
                        return Err(too_many());
                    }
                    return Err(self.failed(&mut failures, Refusal::Unauthorized));
                };
                let token = Arc::new(token);
                self.seen.put(key, token.clone(), now);
                token
            }
        };
        // The bucket is taken before a signature's key is looked up, at the signed tier (the
        // most this token can have): a signature that turns out bad has spent its request, so
        // bad signatures cost at most a bucket's worth of reads, and past it the fast refusal
        // answers them from memory.
        let settings = &snapshot.settings;
        let limited = if settings.request_limits_enabled {
            let policy = super::policy(&token, settings, knock.signed);
            let verdict = self.buckets.take(token.id, policy);
            if !verdict.allowed {
                return Err(Refusal::RateLimited(policy, verdict));
            }
            Some((policy, verdict))
        } else {
            None
        };
        Ok(Admitted {
            token,
            limited,
            failures,
        })
    }

    /// Checks a signed request's signature; a bad one is counted as a bad token is, so an
    /// address sending bad signatures is refused before the database once its tokens are ones
    /// this process does not know.
    pub async fn check_signature(
        &self,
        admitted: &mut Admitted,
        signed: &Signed<'_>,
        now: i64,
    ) -> Result<(), Refusal> {
        if super::check_signature(self.db, signed, now).await? == Signature::Refused {
            return Err(self.failed(&mut admitted.failures, Refusal::BadSignature));
        }
        Ok(())
    }

    /// Notes the token's use; a failure to is logged and let pass, but for a request that writes
    /// (`writes`) when the database cannot write now (another process's write lock past the
    /// acquire timeout): its own write would meet it again, so it is refused now, within that
    /// timeout, rather than after a second wait.
    pub async fn let_in(&self, admitted: &Admitted, writes: bool) -> Result<(), Refusal> {
        let now = store::now();
        // The row was just read: a use noted within the minute needs no write (on SQLite even
        // an UPDATE that changes nothing takes the write lock).
        if admitted
            .token
            .last_used_at
            .is_some_and(|at| at >= now - store::api::TOUCH_EVERY)
        {
            return Ok(());
        }
        match store::api::touch_token(self.db, admitted.token.id, now).await {
            Ok(()) => self.seen.touched(admitted.token.id, now),
            Err(e) if writes && store::is_unavailable(&e) => return Err(Refusal::Failed(e.into())),
            Err(e) => tracing::warn!(error = %e, "could not note an API token's use"),
        }
        Ok(())
    }

    fn address_of(&self, client: IpAddr) -> String {
        login::address_key(&self.snapshot.keys, client)
    }

    /// Counts a failed authentication against the client's address, and hands the refusal on.
    fn failed(&self, failures: &mut Failures, refusal: Refusal) -> Refusal {
        if failures.counting {
            let client = failures.client;
            let address = failures
                .address
                .get_or_insert_with(|| self.address_of(client));
            self.guard
                .failed(Address::ApiAuthFailure, address, TOTAL, &failures.limits);
        }
        refusal
    }
}
