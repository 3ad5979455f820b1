//! The durable queue's protocol as data the hosts execute: its schema
//! ([`migrations`]) and its SQL statements ([`statements`]), one file each
//! under `core/sql/<dialect>/`, for PostgreSQL and SQLite; and the limits
//! and cadence every host applies to them ([`rules`]).

pub mod migrations;
pub mod rules;
pub mod statements;
