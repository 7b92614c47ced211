-- Arrays, maps and structs.
array(1, 2, 3)
array(1, 2.5)
array()
array(null, 1)
array('a', null)
size(array(1, 2))
size(array())
size(null)
array(1, 2, 3)[0]
array(1, 2, 3)[5]
array(1, 2, 3)[-1]
element_at(array(1, 2, 3), 1)
element_at(array(1, 2, 3), -1)
element_at(array(1, 2, 3), 5)
element_at(array(1, 2, 3), 0)
struct(1, 'a')
named_struct('x', 1, 'y', 'b')
named_struct('x', 1, 'y', 'b').y
struct(1 as a, 2 as b).b
array(array(1), array(2, 3))
array(named_struct('k', 1))
split('a,b', ',')[1]
size(split('a,b,c', ','))
element_at(array(1, 2, 3), -3)
element_at(array(1, 2, 3), -4)
element_at(cast(null as array<int>), 0)
size(cast(null as array<int>))
-- Indexes out of range: NULL, or an error in ANSI mode; the TRY form.
array(1, 2)[2]
element_at(array(1, 2), 3)
element_at(map('a', 1), 'b')
try_element_at(array(1), 5)
try_element_at(array(1), -1)
try_element_at(array(1), 0)
try_element_at(map('a', 1), 'b')
size(array())
-- map(k1, v1, ...): common key and value types; a NULL or repeated key is an error.
map('a', 1, 'b', 2)
map(1, 'x', 2L, 'y')
map('a', 1, 'b', 2.5)
map('a', 1)['a']
map('a', null)
map('a', 1, 'a', 2)
map(null, 1)
size(map('a', 1, 'b', 2))
