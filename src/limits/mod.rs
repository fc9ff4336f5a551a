//! The request limits: the flood service that counts (`flood`, a store trait and its
//! backends), the two-tier guard over it (`guard`), the API's token buckets (`bucket`) and the
//! sizing chart's figures (`sizing`). Nothing here knows axum: any address can be guarded.

pub mod bucket;
pub mod flood;
pub mod guard;
pub mod sizing;
pub mod slots;
