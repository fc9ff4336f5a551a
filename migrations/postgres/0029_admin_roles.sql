-- Administrators get an email address and a role. Every existing administrator becomes an
-- owner (the role that can do everything, which is what every administrator could do before),
-- and has no address until one is given. An address is kept lowercased, at most one
-- administrator per address: an OpenID Connect sign-in finds its administrator by it.
ALTER TABLE admins ADD COLUMN email TEXT;
ALTER TABLE admins ADD COLUMN role TEXT NOT NULL DEFAULT 'owner'
    CHECK (role IN ('owner', 'editor', 'viewer'));
CREATE UNIQUE INDEX admins_email ON admins (email);
