-- expect: 2:32 option 'output_mode' belongs to a flow, and this statement defines no query
CREATE STREAMING TABLE t WITH (output_mode = 'update');
