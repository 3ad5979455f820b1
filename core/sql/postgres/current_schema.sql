-- current_schema: the schema the store's tables live in (notifications are
-- '<schema>/<queue>': two stores in different schemas of one database must
-- not wake each other's workers).
--
-- Returns one row: the schema's name (text).
SELECT current_schema()
