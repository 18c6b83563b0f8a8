-- Temporal keeps its own databases beside expd's.
CREATE DATABASE temporal;
CREATE DATABASE temporal_visibility;
