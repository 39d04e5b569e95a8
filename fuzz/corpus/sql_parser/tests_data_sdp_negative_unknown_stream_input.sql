-- expect: 3:22 reads 'evnts', which is not a dataset of this pipeline
CREATE STREAMING TABLE counts AS
SELECT k FROM STREAM(evnts);
