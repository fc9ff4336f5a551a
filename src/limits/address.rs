//! Every address the guard counts, named once.
//!
//! An [`Address`] is what a reader looks up to find everything about one guarded address: the
//! name its counts are kept under in the flood store ([`Address::event`]), the names of its two
//! tiers ([`Address::tiers`]), the metrics it is reported under ([`Address::metric`]), its
//! sizing chart ([`Address::chart`]); its settings are `Settings::limits_of` and
//! `Settings::policy_of` (`crate::domain::settings`), its status line `status::limits_check`
//! (`crate::domain::status`; the sign-in's two limits share `status::login_check`).
//! The guard keeps one set of counters per address, indexed by [`Address::index`]: the decision
//! counters every reader (metrics, the sizing chart, report-only's tally, the status report)
//! reads, so the outcome of a request is counted once (`crate::limits::guard`).
//!
//! The API's token buckets are not here: they are a budget per token (`crate::limits::bucket`),
//! not a count per period, and have their own settings and refusal.

/// A guarded address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Address {
    /// The interaction doorway, per link and in total.
    Doorway,
    /// Payment provider notices, per payment and in total.
    Notice,
    /// Sign-in attempts per client address.
    SignInAddress,
    /// Failed sign-ins per account from one address, and per account in total.
    SignInAccount,
    /// Failed API authentications per client address (under the sign-in's per-address limit).
    ApiAuthFailure,
    /// Wrong emailed codes per code of a link (`| verify email`); no total, so nobody can lock
    /// another's link.
    EmailCode,
}

impl Address {
    /// Every guarded address, in [`Address::index`] order.
    pub const ALL: [Address; 6] = [
        Address::Doorway,
        Address::Notice,
        Address::SignInAddress,
        Address::SignInAccount,
        Address::ApiAuthFailure,
        Address::EmailCode,
    ];

    /// The addresses the status report draws a sizing chart of, in its order. The API's
    /// failures are not drawn: they count under the sign-in's per-address limit, whose chart
    /// the sign-in's attempts already size.
    pub const CHARTED: [Address; 4] = [
        Address::Doorway,
        Address::Notice,
        Address::SignInAddress,
        Address::SignInAccount,
    ];

    /// How many addresses there are: the length of the guard's per-address counters.
    pub const COUNT: usize = Self::ALL.len();

    /// The address's place in the guard's per-address counters.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The name its counts are kept under in the flood store, and log lines name it by. Stored:
    /// never change one (a restart would lose its counts).
    pub const fn event(self) -> &'static str {
        match self {
            Address::Doorway => "interaction",
            Address::Notice => "notice",
            Address::SignInAddress => "login.address",
            Address::SignInAccount => "login.account",
            Address::ApiAuthFailure => "api.auth_failure",
            Address::EmailCode => "email_code",
        }
    }

    /// The names of its two tiers in settings, log lines and metrics: the per-caller tier as its
    /// callers are named (a link, a payment, an address, an account), then the total.
    pub const fn tiers(self) -> [&'static str; 2] {
        match self {
            Address::Doorway => ["per_link", "total"],
            Address::Notice => ["per_payment", "total"],
            Address::SignInAddress | Address::ApiAuthFailure => ["per_address", "total"],
            Address::SignInAccount => ["per_account", "total"],
            Address::EmailCode => ["per_code", "total"],
        }
    }

    /// What a refusal's log line says was refused (`Decision::logged`).
    pub const fn refused_what(self) -> &'static str {
        match self {
            Address::Doorway => "doorway request",
            Address::Notice => "provider notice",
            Address::SignInAddress => "sign-in",
            Address::SignInAccount => "sign-in to the account",
            Address::ApiAuthFailure => "API authentication",
            Address::EmailCode => "emailed code",
        }
    }

    /// The `address` label of its metrics. The sign-in's two limits are one address there, as
    /// they are one request: its requests are the attempts (`FloodGuard::count_request`).
    pub const fn metric(self) -> &'static str {
        match self {
            Address::Doorway => "doorway",
            Address::Notice => "notice",
            Address::SignInAddress | Address::SignInAccount => "login",
            Address::ApiAuthFailure => "api_auth",
            Address::EmailCode => "email_code",
        }
    }

    /// Whether its requests are counted apart from its decisions (one request is several
    /// decisions): the sign-in attempt, counted under its per-address limit.
    pub const fn counts_requests(self) -> bool {
        matches!(self, Address::SignInAddress)
    }

    /// The key of its sizing chart in pages and URLs (`sizing-{key}-…`).
    pub const fn chart(self) -> &'static str {
        match self {
            Address::Doorway => "doorway",
            Address::Notice => "notice",
            Address::SignInAddress => "login-address",
            Address::SignInAccount => "login-account",
            Address::ApiAuthFailure => "api-auth",
            Address::EmailCode => "email-code",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_address_has_its_own_place_event_and_chart() {
        for (i, a) in Address::ALL.iter().enumerate() {
            assert_eq!(a.index(), i);
            for b in &Address::ALL[i + 1..] {
                assert_ne!(a.event(), b.event());
                assert_ne!(a.chart(), b.chart());
            }
        }
    }
}
