-- The sample database that ships with records: the original tutorials' own
-- tables with a few records, so that a first `records people list` shows
-- something.
--
-- Sources/RecordsApp/Resources/sampledb.sqlite is built from this file by
-- scripts/make-sample-database.sh; a test checks that the two agree. Edit
-- this file, then run the script. Do not add schema changes that an
-- installed database needs: those are migrations (AppDatabase.swift), since
-- a database installed from an older template is never copied again.

-- The original tutorial "SQLite 3 Demo".
CREATE TABLE peopleInfo (
    peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT,
    firstname TEXT,
    lastname TEXT,
    age INTEGER
);

INSERT INTO peopleInfo (firstname, lastname, age) VALUES
    ('Ada', 'Lovelace', 36),
    ('Alan', 'Turing', 41),
    ('Grace', 'Hopper', 85),
    ('Katherine', 'Johnson', 101),
    ('Seán', 'O''Brien', 29),
    ('Zoë', 'Åkesson', NULL);

-- The original tutorial "Contacts".
CREATE TABLE CONTACTS (
    ID INTEGER PRIMARY KEY AUTOINCREMENT,
    NAME TEXT,
    ADDRESS TEXT,
    CONTACT TEXT
);

INSERT INTO CONTACTS (NAME, ADDRESS, CONTACT) VALUES
    ('Jane Doe', '12 Main Street, Springfield', '+1 555 0100'),
    ('Marco Rossi', 'Via Roma 1, Milano', 'marco@example.com'),
    ('Isle of Skye Weather', 'Elgol, Isle of Skye', 'http://www.isleofskyeweather.org.uk/24elgol/clientraw.txt');

-- The original tutorial "Coffee": its columns, with prices as exact decimal text
-- instead of REAL and the picture column last: the table of the first
-- Coffee migration. The next migration turns the prices into whole
-- millionths on install, as it does for any database of that version (see
-- CoffeeSchema.swift); the sample keeps this layout, which that migration
-- expects.
CREATE TABLE coffee (
    coffeeID INTEGER PRIMARY KEY,
    coffeeName TEXT,
    price TEXT,
    pictureType TEXT,
    picture BLOB);

INSERT INTO coffee (coffeeName, price, pictureType, picture) VALUES
    ('Espresso', '2.5', 'image/png', X'89504E470D0A1A0A0000000D4948445200000010000000100802000000909168360000004E4944415478DA63F84F2260A048C3891327703170DA40500FC53610EB87281B0D3C08BB867C3F73AC084D1B511AE06A68A6018B9370E941F3317AB0E20F1F84862D5BD61344E83610A99A9C980600777D4E58888622400000000049454E44AE426082'),
    ('Cappuccino', '3.2', NULL, NULL),
    ('Caffè Latte', '3.45', NULL, NULL),
    ('Flat White', '3.6', NULL, NULL),
    ('Americano', '2.8', NULL, NULL),
    ('Café Mocha', '3.95', NULL, NULL);
