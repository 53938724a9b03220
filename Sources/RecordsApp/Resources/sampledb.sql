-- The sample database that ships with records: the seeds' own tables with a
-- few records, so that a first `records people list` shows something.
--
-- Sources/RecordsApp/Resources/sampledb.sqlite is built from this file by
-- scripts/make-sample-database.sh; a test checks that the two agree. Edit
-- this file, then run the script. Do not add schema changes that an
-- installed database needs: those are migrations (AppDatabase.swift), since
-- a database installed from an older template is never copied again.

-- Seed 000, "SQLite 3 Demo".
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

-- Seed 003, "Contacts".
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
