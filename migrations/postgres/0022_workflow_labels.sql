-- A workflow's label in the other languages a page or an email may be read in: a JSON object,
-- language code to label ({"fr": "Intégration des fournisseurs"}). `label` stays the label in
-- the default language and what a language without its own label shows.
-- A constant default: no table is rewritten, and a workflow made before has no other label.
ALTER TABLE workflows ADD COLUMN labels TEXT NOT NULL DEFAULT '{}';
