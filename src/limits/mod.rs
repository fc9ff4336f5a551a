//! The request limits: every guarded address named once (`address`), the flood service that
//! counts (`flood`, a store trait and its backends), the two-tier guard over it (`guard`), its
//! counters as read (`counts`), who was refused already (`refused`), the sizing chart's figures (`sizing`) and the API's token
//! buckets (`bucket`). Nothing here knows axum: any address can be guarded.

pub mod address;
pub mod bucket;
pub mod counts;
pub mod flood;
pub mod guard;
pub mod refused;
pub mod sizing;
