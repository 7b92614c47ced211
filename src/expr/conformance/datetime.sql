-- Dates and timestamps (session time zone UTC).
date'2024-02-29'
timestamp'2024-02-29 10:30:15.123'
year(date'2024-02-29')
month(date'2024-02-29')
day(date'2024-02-29')
dayofmonth(date'2024-03-01')
hour(timestamp'2024-02-29 10:30:00')
year(timestamp'1969-12-31 23:59:59')
year('2024-05-06')
hour('2024-05-06 07:08:09')
to_date('2024-02-29')
to_date('2024/02/29', 'yyyy/MM/dd')
to_date('29.02.2024', 'dd.MM.yyyy')
to_date('2023-02-29')
to_date('bad')
to_timestamp('2024-02-29 10:30:00')
to_timestamp('2024-02-29 10:30', 'yyyy-MM-dd HH:mm')
to_timestamp('29/02/2024 10:30:00', 'dd/MM/yyyy HH:mm:ss')
to_timestamp('2024-02-29T10:30:00.123Z')
to_timestamp('10:30', 'HH:mm')
date_format(date'2024-02-29', 'yyyy-MM-dd')
date_format(timestamp'2024-02-29 10:30:15', 'dd/MM/yyyy HH:mm:ss')
date_format(timestamp'2024-02-29 10:30:15', 'yyyyMMdd')
date_format(timestamp'2024-02-29 10:30:15', 'EEE')
date_format(timestamp'2024-02-29 10:30:15', 'EEEE')
date_format(timestamp'2024-02-29 10:30:15', 'MMM')
date_format(timestamp'2024-02-29 10:30:15', 'MMMM')
date_format(timestamp'2024-02-29 10:30:15.123456', 'HH:mm:ss.SSS')
date_format(timestamp'2024-02-29 10:30:15', 'a')
date_format(timestamp'2024-02-29 22:30:15', 'hh:mm a')
date_format(date'2024-02-29', 'D')
date_format(timestamp'2024-02-29 10:30:15', 'yy')
date_format(timestamp'2024-02-29 10:30:15', '''T''HH')
date_trunc('month', timestamp'2024-02-29 10:30:15')
date_trunc('year', timestamp'2024-02-29 10:30:15')
date_trunc('day', timestamp'2024-02-29 10:30:15')
date_trunc('hour', timestamp'2024-02-29 10:30:15')
date_trunc('week', timestamp'2024-02-29 10:30:15')
date_trunc('quarter', timestamp'2024-02-29 10:30:15')
date_trunc('minute', timestamp'2024-02-29 10:30:15.5')
date_trunc('bogus', timestamp'2024-02-29 10:30:15')
unix_timestamp(timestamp'1970-01-01 00:01:00')
unix_timestamp('1970-01-01 00:01:00')
unix_timestamp('1970-01-02', 'yyyy-MM-dd')
from_unixtime(0)
from_unixtime(86400, 'yyyy-MM-dd')
from_unixtime(1.5)
date'2024-02-29' + 1
date'2024-02-29' - 1
date'2024-03-01' - date'2024-02-29'
timestamp'2024-02-29 00:00:00' < timestamp'2024-02-29 00:00:01'
date_format(timestamp'2024-03-03 10:30:15', 'EEEE MMMM d')
date_format(timestamp'2024-09-02 10:30:15', 'EEEE, MMMM')
date_format(date'2024-12-31', 'DDD')
date_format(date'2024-01-01', 'D')
date_format(timestamp'2024-02-29 10:30:15', 'MMMMM')
date_format(timestamp'2024-02-29 10:30:15', 'EEEEE')
-- An untyped NULL takes the type date arithmetic needs.
date'2024-01-01' + null
date'2024-01-01' - null
null + date'2024-01-01'
timestamp'2024-01-01 00:00:00' + null
timestamp'2024-01-01 00:00:00' - null
timestamp'2024-01-01 00:00:00' + (+ interval 1 day)
timestamp'2024-01-01 00:00:00' - interval 1 day
-- Text that does not parse: NULL, or an error in ANSI mode; the TRY form.
to_timestamp('bad')
to_timestamp('bad', 'yyyy-MM-dd')
to_date('bad', 'yyyy-MM-dd')
unix_timestamp('bad', 'yyyy-MM-dd')
try_to_timestamp('bad')
try_to_timestamp('2024-01-01', 'yyyy-MM-dd')
try_to_timestamp('bad', 'yyyy-MM-dd')
try_to_timestamp('2024-02-30 10:00', 'yyyy-MM-dd HH:mm')
