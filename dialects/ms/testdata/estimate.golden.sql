SELECT o.[type], (SELECT SUM(p.[rows]) FROM sys.partitions AS p WHERE p.[object_id] = o.[object_id] AND p.[index_id] IN (0, 1))
FROM sys.objects AS o JOIN sys.schemas AS sc ON sc.[schema_id] = o.[schema_id]
WHERE sc.[name] = @p1 AND o.[name] = @p2 AND o.[type] IN ('U', 'V')
