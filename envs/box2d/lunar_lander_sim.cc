#include "envs/box2d/lunar_lander_sim.h"

namespace recur::envs::lunar_lander {

// Gymnasium's ContactDetector: the lander touching anything ends the episode; a leg's flag is set
// by BeginContact and cleared by EndContact (a plain bool: leaving one of two touching edges
// clears it, as in Gymnasium).
class Sim::Contacts final : public b2ContactListener {
 public:
  explicit Contacts(Sim& sim) : sim_(sim) {}
  void BeginContact(b2Contact* contact) override {
    const b2Body* a = contact->GetFixtureA()->GetBody();
    const b2Body* b = contact->GetFixtureB()->GetBody();
    if (a == sim_.lander_ || b == sim_.lander_) sim_.game_over_ = true;
    for (int i = 0; i < 2; ++i)
      if (a == sim_.legs_[i] || b == sim_.legs_[i]) sim_.leg_contact_[i] = true;
  }
  void EndContact(b2Contact* contact) override {
    const b2Body* a = contact->GetFixtureA()->GetBody();
    const b2Body* b = contact->GetFixtureB()->GetBody();
    for (int i = 0; i < 2; ++i)
      if (a == sim_.legs_[i] || b == sim_.legs_[i]) sim_.leg_contact_[i] = false;
  }

 private:
  Sim& sim_;
};

namespace {
b2Vec2 vec(double x, double y) {  // pybox2d passes Python floats through SWIG as float
  return {static_cast<float>(x), static_cast<float>(y)};
}
}  // namespace

Sim::Sim(const SimConfig& config) : config_(config), contacts_(std::make_unique<Contacts>(*this)) {}

Sim::~Sim() {
  destroy();
}

void Sim::destroy() {
  // The listener goes first: destroying bodies calls EndContact on the live contacts.
  if (world_) world_->SetContactListener(nullptr);
  world_.reset();
  moon_ = lander_ = legs_[0] = legs_[1] = nullptr;
}

void Sim::build(const ResetDraws& draws) {
  destroy();
  world_ = std::make_unique<b2World>(vec(0, config_.gravity));
  world_->SetContactListener(contacts_.get());
  game_over_ = false;
  prev_shaping_.reset();
  leg_contact_[0] = leg_contact_[1] = false;
  terrain_ = make_terrain(draws.heights);

  // The moon: the floor edge (default friction 0.2), then the 10 terrain edges (friction 0.1).
  b2BodyDef moon_def;
  moon_ = world_->CreateBody(&moon_def);
  b2EdgeShape floor;
  floor.SetTwoSided(vec(0, 0), vec(kW, 0));
  b2FixtureDef floor_def;
  floor_def.shape = &floor;
  moon_->CreateFixture(&floor_def);
  for (int i = 0; i < kChunks - 1; ++i) {
    b2EdgeShape edge;
    edge.SetTwoSided(vec(terrain_.chunk_x[i], terrain_.smooth_y[i]),
                     vec(terrain_.chunk_x[i + 1], terrain_.smooth_y[i + 1]));
    b2FixtureDef fd;
    fd.shape = &edge;
    fd.density = 0;
    fd.friction = 0.1f;
    moon_->CreateFixture(&fd);
  }

  // The lander, pushed by the initial random force.
  const double x0 = kViewportW / kScale / 2, y0 = kViewportH / kScale;
  b2BodyDef lander_def;
  lander_def.type = b2_dynamicBody;
  lander_def.position = vec(x0, y0);
  lander_def.angle = 0;
  lander_ = world_->CreateBody(&lander_def);
  constexpr double kPoly[6][2] = {{-14, 17}, {-17, 0}, {-17, -10}, {17, -10}, {17, 0}, {14, 17}};
  b2Vec2 points[6];
  for (int i = 0; i < 6; ++i) points[i] = vec(kPoly[i][0] / kScale, kPoly[i][1] / kScale);
  b2PolygonShape hull;
  hull.Set(points, 6);
  b2FixtureDef hull_def;
  hull_def.shape = &hull;
  hull_def.density = 5.0f;
  hull_def.friction = 0.1f;
  hull_def.restitution = 0.0f;
  hull_def.filter.categoryBits = 0x0010;
  hull_def.filter.maskBits = 0x001;  // collide only with the ground
  lander_->CreateFixture(&hull_def);
  lander_->ApplyForceToCenter(vec(draws.force_x, draws.force_y), true);
  wind_idx_ = draws.wind_idx;
  torque_idx_ = draws.torque_idx;

  // The legs: i = -1 then +1, each on a motorised revolute joint resting on its limit.
  for (int k = 0; k < 2; ++k) {
    const double i = k == 0 ? -1 : +1;
    b2BodyDef leg_def;
    leg_def.type = b2_dynamicBody;
    leg_def.position = vec(x0 - i * kLegAway / kScale, y0);
    leg_def.angle = static_cast<float>(i * 0.05);
    b2Body* leg = world_->CreateBody(&leg_def);
    b2PolygonShape box;
    box.SetAsBox(static_cast<float>(kLegW / kScale), static_cast<float>(kLegH / kScale));
    b2FixtureDef fd;
    fd.shape = &box;
    fd.density = 1.0f;
    fd.restitution = 0.0f;
    fd.filter.categoryBits = 0x0020;
    fd.filter.maskBits = 0x001;
    leg->CreateFixture(&fd);

    b2RevoluteJointDef rjd;
    rjd.bodyA = lander_;
    rjd.bodyB = leg;
    rjd.localAnchorA = vec(0, 0);
    rjd.localAnchorB = vec(i * kLegAway / kScale, kLegDown / kScale);
    // pybox2d sets referenceAngle = bodyB.angle - bodyA.angle when it is not given; Box2D's C++
    // default is 0, so it is set here (-0.05, +0.05).
    rjd.referenceAngle = static_cast<float>(i * 0.05);
    rjd.enableMotor = true;
    rjd.enableLimit = true;
    rjd.maxMotorTorque = static_cast<float>(kLegSpringTorque);
    rjd.motorSpeed = static_cast<float>(0.3 * i);  // low enough not to jump back into the sky
    if (k == 0) {
      rjd.lowerAngle = static_cast<float>(0.9 - 0.5);
      rjd.upperAngle = 0.9f;
    } else {
      rjd.lowerAngle = -0.9f;
      rjd.upperAngle = static_cast<float>(-0.9 + 0.5);
    }
    world_->CreateJoint(&rjd);
    legs_[k] = leg;
  }
}

BodyState Sim::body() const {
  const b2Vec2 p = lander_->GetPosition();
  const b2Vec2 v = lander_->GetLinearVelocity();
  BodyState b;
  b.x = p.x;
  b.y = p.y;
  b.vx = v.x;
  b.vy = v.y;
  b.angle = lander_->GetAngle();
  b.omega = lander_->GetAngularVelocity();
  b.leg_contact[0] = leg_contact_[0];
  b.leg_contact[1] = leg_contact_[1];
  return b;
}

bool Sim::awake() const {
  return lander_->IsAwake();
}

Outcome Sim::step(std::span<const float> action, double u0, double u1) {
  // Wind and turbulence while neither leg touches the ground.
  if (config_.enable_wind && !(leg_contact_[0] || leg_contact_[1])) {
    const double wind = wind_signal(wind_idx_++, config_.wind_power);
    lander_->ApplyForceToCenter(vec(wind, 0.0), true);
    const double torque = wind_signal(torque_idx_++, config_.turbulence_power);
    lander_->ApplyTorque(static_cast<float>(torque), true);
  }

  // Engines: impulses at points offset from the body origin (not the centre of mass).
  const Throttle t = throttle(action, config_.continuous);
  const b2Vec2 pos = lander_->GetPosition();
  const double angle = lander_->GetAngle();
  if (t.main > 0) {
    const Impulse m = main_engine_impulse(pos.x, pos.y, angle, u0, u1, t.main);
    lander_->ApplyLinearImpulse({m.ix, m.iy}, {m.px, m.py}, true);
  }
  if (t.side > 0) {
    const Impulse s = side_engine_impulse(pos.x, pos.y, angle, u0, u1, t.side, t.direction);
    lander_->ApplyLinearImpulse({s.ix, s.iy}, {s.px, s.py}, true);
  }

  world_->Step(1.0f / kFps, kVelocityIterations, kPositionIterations);

  state_ = make_state(body(), terrain_.helipad_y);
  const double shape = shaping(state_);
  const Outcome out =
      reward_and_termination(prev_shaping_, shape, t, game_over_, state_[0], awake());
  prev_shaping_ = shape;
  return out;
}

}  // namespace recur::envs::lunar_lander
