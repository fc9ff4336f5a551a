-- A workflow's label in the other languages a page or an email may be read in: a JSON object,
-- language code to label ({"fr": "Revue de contrat"}). `label` stays the label in the default
-- language and what a language without its own label shows.
-- A constant default: no table is rewritten, and a workflow made before has no other label.
ALTER TABLE workflows ADD COLUMN labels TEXT NOT NULL DEFAULT '{}';
-- The shipped examples get their French labels (`domain::workflow::seed::FRENCH_LABELS`) here,
-- once: only where the label is still exactly the shipped one, and an administrator who later
-- clears it is not overruled on the next start. A fresh database has no rows yet; the seed
-- writes them with their labels.
UPDATE workflows SET labels = '{"fr":"Intégration des fournisseurs"}'
  WHERE name = 'supplier_onboarding' AND label = 'Supplier onboarding';
UPDATE workflows SET labels = '{"fr":"Revue de contrat"}'
  WHERE name = 'contract_review' AND label = 'Contract review';
UPDATE workflows SET labels = '{"fr":"Paiement de commande"}'
  WHERE name = 'order_payment' AND label = 'Order payment';
