-- thund extension: a standalone SQL file names its pipeline and storage.
CREATE PIPELINE standalone_demo WITH (storage = './.thund/storage');

CREATE TABLE lookup (code STRING NOT NULL, label STRING)
AS SELECT * FROM (VALUES ('a', 'Alpha'), ('b', 'Beta')) t(code, label);

CREATE MATERIALIZED VIEW labelled AS
SELECT code, upper(label) AS label FROM lookup;
