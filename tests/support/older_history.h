#pragma once
// SQL taking a current (schema 8) history back to what earlier Kiln versions wrote, for the migration tests: a
// file made this way from a recorded run must read back exactly as the run did once it is migrated again.

namespace older_history {

// Schema 7 had no measured runs.
inline constexpr const char* kBackToSchema7 = R"sql(
DROP TABLE measured_profiles;
DROP TABLE measured_tasks;
DROP TABLE measured_static_memory;
PRAGMA user_version = 7;
)sql";

// Schema 6 (after kBackToSchema7) kept each row's end in a last_pass column as well as in pass_rows' ended lists (which the views read).
inline constexpr const char* kBackToSchema6 = R"sql(
ALTER TABLE nodes ADD COLUMN last_pass INTEGER;
ALTER TABLE "values" ADD COLUMN last_pass INTEGER;
ALTER TABLE edges ADD COLUMN last_pass INTEGER;
UPDATE nodes SET last_pass = (SELECT e.last_pass FROM node_ends e WHERE e.run_id = nodes.run_id AND
  e.node_id = nodes.node_id AND e.first_pass = nodes.first_pass);
UPDATE "values" SET last_pass = (SELECT e.last_pass FROM value_ends e WHERE e.run_id = "values".run_id AND
  e.value_id = "values".value_id AND e.first_pass = "values".first_pass);
UPDATE edges SET last_pass = (SELECT e.last_pass FROM edge_ends e WHERE e.run_id = edges.run_id AND
  e.consumer_node = edges.consumer_node AND e.consumer_index = edges.consumer_index AND
  e.first_pass = edges.first_pass);
DROP VIEW node_ends;
DROP VIEW value_ends;
DROP VIEW edge_ends;
PRAGMA user_version = 6;
)sql";

// Schema 5 (after kBackToSchema6) had no pass_rows: partial indexes on the started and ended rows instead.
inline constexpr const char* kBackToSchema5 = R"sql(
DROP TABLE pass_rows;
CREATE INDEX nodes_started ON nodes(run_id, first_pass) WHERE first_pass > 0;
CREATE INDEX nodes_ended ON nodes(run_id, last_pass) WHERE last_pass IS NOT NULL;
CREATE INDEX values_started ON "values"(run_id, first_pass) WHERE first_pass > 0;
CREATE INDEX values_ended ON "values"(run_id, last_pass) WHERE last_pass IS NOT NULL;
CREATE INDEX edges_started ON edges(run_id, first_pass) WHERE first_pass > 0;
CREATE INDEX edges_ended ON edges(run_id, last_pass) WHERE last_pass IS NOT NULL;
PRAGMA user_version = 5;
)sql";

}  // namespace older_history
