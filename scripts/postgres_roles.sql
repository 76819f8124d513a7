-- The application role of docs/architecture.md "Tenant isolation in PostgreSQL": it logs in, owns nothing and
-- has no BYPASSRLS, so row-level security applies to it. Roles are cluster-wide: this is idempotent and safe to
-- run against any database of the cluster, by a role that may create roles. The migrations grant it its rights.
-- A password is for production (`ALTER ROLE trainer_app PASSWORD '…'`); CI's trust authentication needs none.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'trainer_app') THEN
        CREATE ROLE trainer_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
    ELSE
        ALTER ROLE trainer_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;  -- another process created it at the same moment
END
$$;
