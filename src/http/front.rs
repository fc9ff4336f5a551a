//! What runs before routing: the doorway's guard and the API's fast refusal.
//!
//! Both answer a flood, so both answer it before anything else runs, routing included: a path
//! under the doorway's prefix, or the test provider's (whose pages resolve a handle), is
//! counted (`doorway::guard`), a path under the API's is checked
//! against its caller's bucket (`api::refusal`), and a refusal is answered from `call` itself,
//! with no boxed future, no clone of the router and no route lookup. axum's routing (the route
//! table's lookup, then the wildcard's percent-decoded copy into the request) costs more than
//! the guard's own work, and a bare 429 pays it too, which is what a refusal is measured
//! against (docs/performance.md).
//!
//! The prefixes are the routes' own: the doorway's one route is everything under
//! `doorway::PREFIX`, and every API route is under `api::PREFIX` (tests in each module). A
//! request that is not refused goes on to the router, through every layer, as before.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;

use super::priority::{self, Refusal};
use super::{AppState, api, doorway};

/// The app as served: the router behind the refusals that run before it.
#[derive(Clone)]
pub struct Front<S> {
    inner: S,
    shared: Arc<Shared>,
}

/// What every clone shares: hyper clones the service for every request, so this is one count.
struct Shared {
    state: AppState,
    /// The site is on https: a refusal carries `Strict-Transport-Security` too.
    https: bool,
}

impl<S> Front<S> {
    pub fn new(inner: S, state: AppState, https: bool) -> Self {
        Self {
            inner,
            shared: Arc::new(Shared { state, https }),
        }
    }
}

type BoxedResponse = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

/// A refusal ready at once, a refusal that lets the site's work in progress go first, or the
/// router's own work (`F`, the router's future as it is: not boxed again).
pub enum FrontFuture<F> {
    Refused(Option<Response>),
    Deferred(BoxedResponse),
    Passed(F),
}

impl<F> Future for FrontFuture<F>
where
    F: Future<Output = Result<Response, Infallible>> + Unpin,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            FrontFuture::Refused(response) => Poll::Ready(Ok(response
                .take()
                .unwrap_or_else(|| doorway::refusal(crate::i18n::Lang::En)))),
            FrontFuture::Deferred(future) => future.as_mut().poll(cx),
            FrontFuture::Passed(future) => Pin::new(future).poll(cx),
        }
    }
}

impl<S> tower::Service<Request> for Front<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
    S::Future: Unpin,
{
    type Response = Response;
    type Error = Infallible;
    type Future = FrontFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let Shared { state, https } = &*self.shared;
        let refusal = if let Some(credential) = doorway::guarded_credential(request.uri().path()) {
            doorway::guard(state, *https, &request, credential)
        } else if request.uri().path().starts_with(api::PREFIX) {
            api::refusal::refuse(state, *https, &mut request)
        } else {
            None
        };
        match refusal {
            // Work in progress goes first (`priority`): one atomic read when there is none.
            Some(Refusal {
                response,
                defer: true,
            }) if state.work.busy() => {
                let work = state.work.clone();
                FrontFuture::Deferred(Box::pin(async move {
                    work.idle_within(priority::MAX_DEFER).await;
                    Ok(response)
                }))
            }
            Some(Refusal { response, .. }) => FrontFuture::Refused(Some(response)),
            None => FrontFuture::Passed(self.inner.call(request)),
        }
    }
}
