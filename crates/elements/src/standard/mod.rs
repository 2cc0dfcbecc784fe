//! Standard elements: sources, sinks, queues, counters, schedulers,
//! classifiers, scripting.

pub mod checkpaint;
pub mod classifier;
pub mod classifier_program;
pub mod counter;
pub mod discard;
pub mod drivermanager;
pub mod errorelement;
pub mod hashswitch;
pub mod idle;
pub mod infinitesource;
pub mod message;
pub mod notifierqueue;
pub mod null;
pub mod paint;
pub mod paintswitch;
pub mod painttee;
pub mod print;
pub mod priosched;
pub mod pulltee;
pub mod queue;
pub mod ratedsource;
pub mod ratedunqueue;
pub mod roundrobinsched;
pub mod roundrobinswitch;
pub mod scheduleinfo;
pub mod script;
pub mod scriptlang;
pub mod settimestamp;
pub mod simplequeue;
pub mod staticswitch;
pub mod stridesched;
pub mod strip;
pub mod striptonetheader;
pub mod switch;
pub mod tee;
pub mod timedsource;
pub mod tokenbucket;
pub mod truncate;
pub mod unqueue;
pub mod unstrip;

mod reg_a;
mod reg_b;
mod reg_c;

use rclick_core::Registry;

use queue::{Queue, QueueKind};

/// Adds the standard element classes to `reg`.
pub fn register(reg: &mut Registry) {
    reg.add("Counter", || Box::<counter::Counter>::default());
    reg.add("Discard", || Box::<discard::Discard>::default());
    reg.add("InfiniteSource", || {
        Box::<infinitesource::InfiniteSource>::default()
    });
    reg.add("Null", || Box::<null::Null>::default());
    reg.add("Queue", || Box::new(Queue::new(QueueKind::Notifier)));
    reg.add("NotifierQueue", || Box::new(notifierqueue::new()));
    reg.add("SimpleQueue", || Box::new(simplequeue::new()));
    reg.add("Tee", || Box::<tee::Tee>::default());
    reg.add("Unqueue", || Box::<unqueue::Unqueue>::default());
    reg_a::register(reg);
    reg_b::register(reg);
    reg_c::register(reg);
}
