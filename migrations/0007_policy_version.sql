-- 0007_policy_version: the version of a project's policy, for optimistic
-- concurrency between servers.
--
-- Every write of a project's templates, rules, bindings, scopes or locks
-- adds one to it in the transaction that writes them. An edit of what was
-- read (the admin API) is written only while the version is still the one
-- read: compared and advanced in one UPDATE (Store.ReplacePolicyAt), so
-- two replicas on one PostgreSQL control plane never overwrite each
-- other's edit.

ALTER TABLE projects ADD COLUMN policy_version BIGINT NOT NULL DEFAULT 1;
