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
