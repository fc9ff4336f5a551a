// A real OpenID Provider on loopback for tests/it/oidc.rs: panva's certified `oidc-provider`,
// installed by .ci/run (npm, pinned) into target/oidc and named by ORCHESTRA_OIDC_PROVIDER.
//
// The app's port is not known before the provider's issuer must be, so the provider comes up in
// two steps: it listens on a free loopback port and prints `issuer <url>`, then reads one line
// from stdin, the client's redirect URI, configures its one client and prints `ready`.
//
// Sign-in is scripted rather than a form: the test follows the provider's redirect to
// `/interaction/<uid>` and adds `?as=<user>`; the user is signed in and consents at once. The
// rest (authorization, PKCE, the code, the token endpoint, signed ID tokens, JWKS) is the
// certified provider's own.
import http from 'node:http';
import readline from 'node:readline';
import { createRequire } from 'node:module';

const require = createRequire(process.env.ORCHESTRA_OIDC_PROVIDER_MODULES + '/');
const { default: Provider } = await import(require.resolve('oidc-provider'));

const USERS = {
  ada: { email: 'Ada@Example.org', email_verified: true },
  stranger: { email: 'stranger@example.org', email_verified: true },
  unverified: { email: 'unverified@example.org', email_verified: false },
  disabled: { email: 'disabled@example.org', email_verified: true },
  noemail: {},
};

let provider;
const server = http.createServer(async (req, res) => {
  if (!provider) {
    res.statusCode = 503;
    res.end();
    return;
  }
  const url = new URL(req.url, 'http://localhost');
  if (url.pathname.startsWith('/interaction/')) {
    try {
      const details = await provider.interactionDetails(req, res);
      const accountId = url.searchParams.get('as');
      if (!USERS[accountId]) {
        res.statusCode = 400;
        res.end('unknown test user');
        return;
      }
      const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
      grant.addOIDCScope(details.params.scope);
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
    } catch (e) {
      res.statusCode = 400;
      res.end(String(e));
    }
    return;
  }
  provider.callback()(req, res);
});

server.listen(0, '127.0.0.1', () => {
  // Named `localhost` while the app is `127.0.0.1`: one cookie jar keeps the two sites' cookies
  // apart (cookies are by host, not port).
  const issuer = `http://localhost:${server.address().port}`;
  process.stdout.write(`issuer ${issuer}\n`);
  const lines = readline.createInterface({ input: process.stdin });
  lines.once('line', (redirect) => {
    provider = new Provider(issuer, {
      clients: [
        {
          client_id: process.env.OIDC_CLIENT_ID || 'orchestra',
          client_secret: process.env.OIDC_CLIENT_SECRET || 'a-test-client-secret',
          redirect_uris: [redirect.trim()],
          response_types: ['code'],
          grant_types: ['authorization_code'],
        },
      ],
      // Every client must send PKCE (S256), not only public ones.
      pkce: { required: () => true },
      claims: { openid: ['sub'], email: ['email', 'email_verified'] },
      // The scope's claims in the ID token itself, as Google and Entra send them.
      conformIdTokenClaims: false,
      features: { devInteractions: { enabled: false } },
      cookies: { keys: ['a test cookie key, not a secret'] },
      async findAccount(ctx, id) {
        const user = USERS[id];
        if (!user) return undefined;
        return { accountId: id, async claims() { return { sub: id, ...user }; } };
      },
    });
    // Plain http on loopback: the provider would otherwise refuse a non-https issuer's cookies.
    provider.proxy = true;
    process.stdout.write('ready\n');
  });
  // The test ends by closing stdin (or being killed): the provider goes with it.
  process.stdin.on('end', () => process.exit(0));
});
