SELECT o.object_id,
       o.name,
       c.name,
       ty.name,
       COALESCE(bt.name, ty.name),
       c.max_length,
       c.precision,
       c.scale,
       CAST(COALESCE(c.is_nullable, 1) AS bit),
       CAST(CASE WHEN pk.column_id IS NULL THEN 0 ELSE 1 END AS bit),
       CAST(COALESCE(c.is_identity, 0) AS bit),
       CAST(COALESCE(c.is_computed, 0) AS bit),
       CAST(CASE WHEN dc.object_id IS NULL THEN 0 ELSE 1 END AS bit),
       COALESCE(dc.definition, cc.definition, N''),
       COALESCE(fk.ref_table, N''),
       COALESCE(fk.ref_column, N'')
FROM sys.objects AS o
JOIN sys.schemas AS s ON s.schema_id = o.schema_id
JOIN sys.columns AS c ON c.object_id = o.object_id
JOIN sys.types AS ty ON ty.user_type_id = c.user_type_id
LEFT JOIN sys.types AS bt ON bt.user_type_id = ty.system_type_id
     AND ty.is_user_defined = 1 AND ty.is_assembly_type = 0
LEFT JOIN sys.default_constraints AS dc ON dc.object_id = c.default_object_id
LEFT JOIN sys.computed_columns AS cc ON cc.object_id = c.object_id AND cc.column_id = c.column_id
LEFT JOIN (
    SELECT ic.object_id, ic.column_id
    FROM sys.indexes AS i
    JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id
    WHERE i.is_primary_key = 1 AND ic.key_ordinal > 0
) AS pk ON pk.object_id = c.object_id AND pk.column_id = c.column_id
OUTER APPLY (
    SELECT TOP (1) rt.name AS ref_table, rc.name AS ref_column
    FROM sys.foreign_key_columns AS fkc
    JOIN sys.foreign_keys AS f ON f.object_id = fkc.constraint_object_id
    JOIN sys.objects AS rt ON rt.object_id = fkc.referenced_object_id AND rt.schema_id = o.schema_id
    JOIN sys.columns AS rc ON rc.object_id = fkc.referenced_object_id AND rc.column_id = fkc.referenced_column_id
    WHERE fkc.parent_object_id = c.object_id AND fkc.parent_column_id = c.column_id
      AND NOT EXISTS (SELECT 1 FROM sys.foreign_key_columns AS k2
                      WHERE k2.constraint_object_id = fkc.constraint_object_id AND k2.constraint_column_id <> 1)
    ORDER BY f.name COLLATE Latin1_General_BIN2
) AS fk
WHERE s.name = @p1
  AND o.type IN ('U', 'V')
  AND o.is_ms_shipped = 0
ORDER BY o.object_id, c.column_id
