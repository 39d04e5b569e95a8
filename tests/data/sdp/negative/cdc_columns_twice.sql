-- expect: 6:1 COLUMNS is given twice in AUTO CDC
CREATE STREAMING TABLE changes AS SELECT * FROM STREAM read_memory('c');
CREATE STREAMING TABLE target;
CREATE FLOW cdc AS AUTO CDC INTO target FROM STREAM changes KEYS (id) SEQUENCE BY seq
COLUMNS (id, name)
COLUMNS * EXCEPT (op);
