-- API tokens get a key of their own (issue 20): `orchestra keys rotate` replaced the hash salt
-- their stored hashes were made with, and so voided every token. The token key starts as the
-- hash salt, so every token made before keeps its stored hash and keeps working; from now on
-- `keys rotate` leaves it alone, and `orchestra token rotate-key` replaces it.
ALTER TABLE site_keys ADD COLUMN token_key TEXT;
UPDATE site_keys SET token_key = hash_salt;
