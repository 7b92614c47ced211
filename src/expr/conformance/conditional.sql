-- Conditional expressions.
if(true, 1, 2)
if(null, 1, 2)
if(1 > 0, 'a', null)
if(true, 1, 2.5)
iff(false, 'x', 'y')
case when 1 > 2 then 'a' when 2 > 1 then 'b' end
case when false then 1 end
case 2 when 1 then 'one' when 2 then 'two' else 'many' end
case null when null then 1 else 0 end
case when true then 1 else 'x' end
coalesce(null, 2, 3)
coalesce(null, null)
coalesce(1, 2.5)
coalesce(null, 'a', 1)
ifnull(null, 'd')
nvl(1, 2)
nullif(1, 1)
nullif(1, 2)
nullif('a', null)
-- Common types of branches that differ by mode (ANSI promotes the string to the other type).
case when true then 1.5 else '2' end
coalesce('1', 2)
coalesce(1.5, '2')
array(1, '2')
if(true, date'2024-01-01', '2024-01-02')
if(false, true, 'false')
-- Branches a row does not reach never fail it.
case when false then 1/0 else 1 end
if(false, 1/0, 2)
coalesce(1, 1/0)
nvl(1, 1/0)
false and 1/0 > 1
true or 1/0 > 1
nullif(1, 1/0)
case when 1 = 1 then 'ok' else cast('x' as int) end
